package io.relgraph.client;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * A cluster's shard map (docs/cluster.md, "Placement"; net/cluster/placement.h), as SHARD_MAP
 * hands it out in its versioned text form:
 *
 * <pre>
 *   relgraph-cluster-map 1
 *   version &lt;n&gt;
 *   relgraph-shard-map 1
 *   buckets &lt;n&gt;                                     1..65536
 *   generation &lt;g&gt;                                  optional, &gt;= 2 (absent: 1)
 *   shard &lt;id&gt; &lt;host:port&gt;                         a shard of one node
 *   shard &lt;id&gt; &lt;host:port&gt;,&lt;host:port&gt;... group &lt;name&gt;   a shard served by a group
 *   owner &lt;first&gt;-&lt;last&gt; &lt;id&gt;                     every bucket exactly once
 *   move &lt;first&gt;-&lt;last&gt; &lt;from&gt; &lt;to&gt; &lt;phase&gt; &lt;id&gt; [&lt;flipped_ms&gt;]   at most one
 * </pre>
 *
 * A user belongs to bucket {@link Xxh3#bucketOf}; the bucket's owner line names its shard. Maps
 * are ordered by (generation, version): {@link #newerThan}. Immutable; thread-safe.
 */
public final class ShardMap {
  /** One shard: its id, and its one address or its group's name and members (first = address). */
  public record Shard(int id, String address, String group, List<String> members) {
    /** Whether a replication group serves it. */
    public boolean grouped() {
      return !group.isEmpty();
    }

    /** Where it may be reached: its members, or its one address. */
    public List<String> addresses() {
      return members.isEmpty() ? List.of(address) : members;
    }
  }

  /** A bucket move in progress: buckets first..last from shard {@code from} to {@code to}. */
  public record Move(int first, int last, int from, int to, String phase, long id) {}

  private static final String VERSIONED_MAGIC = "relgraph-cluster-map 1";
  private static final String MAGIC = "relgraph-shard-map 1";

  private final long version;
  private final long generation;
  private final int buckets;
  private final List<Shard> shards; // in id order
  private final int[] owner;
  private final Move move;

  private ShardMap(long version, long generation, int buckets, List<Shard> shards, int[] owner,
      Move move) {
    this.version = version;
    this.generation = generation;
    this.buckets = buckets;
    this.shards = shards;
    this.owner = owner;
    this.move = move;
  }

  public long version() {
    return version;
  }

  public long generation() {
    return generation;
  }

  public int buckets() {
    return buckets;
  }

  public List<Shard> shards() {
    return shards;
  }

  /** The move in progress, or null. */
  public Move move() {
    return move;
  }

  /** The id of the shard owning bucket {@code bucket}. */
  public int ownerOfBucket(int bucket) {
    return owner[bucket];
  }

  /** The id of the shard that serves {@code user}. */
  public int ownerOf(long user) {
    return owner[Xxh3.bucketOf(user, buckets)];
  }

  /** Shard {@code id}, or null when the map has none. */
  public Shard find(int id) {
    for (Shard s : shards) {
      if (s.id() == id) return s;
    }
    return null;
  }

  /** A higher generation, or the same one and a higher version. */
  public boolean newerThan(ShardMap other) {
    return generation != other.generation ? generation > other.generation : version > other.version;
  }

  /** SHARD_MAP's text: {@code relgraph-cluster-map 1}, {@code version <n>}, then {@link #parse}'s form. */
  public static ShardMap parseVersioned(String text) {
    String[] head = text.split("\n", 3);
    if (head.length < 3 || !head[0].equals(VERSIONED_MAGIC)) {
      throw new IllegalArgumentException("shard map: does not start with '" + VERSIONED_MAGIC + "'");
    }
    if (!head[1].startsWith("version ")) {
      throw new IllegalArgumentException("shard map: expected 'version N' on its second line");
    }
    return parse(head[2], number(head[1].substring(8), 2));
  }

  /** The map's text form (placement.h), read at {@code version}. */
  public static ShardMap parse(String text, long version) {
    String[] lines = text.split("\n", -1);
    if (!lines[0].equals(MAGIC)) throw bad(1, "expected '" + MAGIC + "'");
    int buckets = 0;
    long generation = 1;
    int[] owner = null;
    List<Shard> shards = new ArrayList<>();
    Move move = null;
    for (int i = 1; i < lines.length; i++) {
      int n = i + 1;
      if (lines[i].isEmpty()) continue;
      String[] w = lines[i].trim().split(" +");
      if (w[0].equals("buckets") && w.length == 2 && buckets == 0) {
        long b = number(w[1], n);
        if (b < 1 || b > 65536) throw bad(n, "bucket count " + b + " outside 1-65536");
        buckets = (int) b;
        owner = new int[buckets];
      } else if (w[0].equals("generation") && w.length == 2) {
        generation = number(w[1], n);
      } else if (w[0].equals("shard") && w.length == 3 && !w[2].contains(",")) {
        shards.add(new Shard(shardId(w[1], n), address(w[2], n), "", List.of()));
      } else if (w[0].equals("shard") && w.length == 5 && w[3].equals("group")) {
        List<String> members = new ArrayList<>();
        for (String m : w[2].split(",")) members.add(address(m, n));
        shards.add(new Shard(shardId(w[1], n), members.get(0), w[4],
            Collections.unmodifiableList(members)));
      } else if (w[0].equals("owner") && w.length == 3 && buckets > 0) {
        int[] r = range(w[1], buckets, n);
        int id = shardId(w[2], n);
        for (int b = r[0]; b <= r[1]; b++) {
          if (owner[b] != 0) throw bad(n, "bucket " + b + " owned twice");
          owner[b] = id;
        }
      } else if (w[0].equals("move") && (w.length == 6 || w.length == 7) && buckets > 0
          && move == null) {
        int[] r = range(w[1], buckets, n);
        if (!List.of("prepare", "flip", "copy").contains(w[4])) {
          throw bad(n, "move phase '" + w[4] + "', expected prepare, flip or copy");
        }
        move = new Move(r[0], r[1], shardId(w[2], n), shardId(w[3], n), w[4], number(w[5], n));
      } else {
        throw bad(n, "'" + lines[i] + "' is not a buckets, generation, shard, owner or move line");
      }
    }
    if (buckets == 0) throw new IllegalArgumentException("shard map: no buckets line");
    shards.sort((a, b) -> Integer.compare(a.id(), b.id()));
    for (int i = 1; i < shards.size(); i++) {
      if (shards.get(i).id() == shards.get(i - 1).id()) {
        throw new IllegalArgumentException("shard map: shard " + shards.get(i).id() + " listed twice");
      }
    }
    ShardMap m = new ShardMap(version, generation, buckets, Collections.unmodifiableList(shards),
        owner, move);
    for (int b = 0; b < buckets; b++) {
      if (owner[b] == 0) throw new IllegalArgumentException("shard map: bucket " + b + " has no owner");
      if (m.find(owner[b]) == null) {
        throw new IllegalArgumentException("shard map: bucket " + b + " owned by shard " + owner[b]
            + ", which it does not list");
      }
    }
    return m;
  }

  @Override
  public String toString() {
    return "shard map v" + version + " (generation " + generation + ", " + buckets + " buckets, shards "
        + Arrays.toString(shards.stream().mapToInt(Shard::id).toArray())
        + (move == null ? "" : ", moving " + move) + ")";
  }

  private static IllegalArgumentException bad(int line, String what) {
    return new IllegalArgumentException("shard map line " + line + ": " + what);
  }

  private static long number(String s, int line) {
    if (s.isEmpty() || !s.chars().allMatch(Character::isDigit)) throw bad(line, "'" + s + "' is not a number");
    try {
      return Long.parseLong(s);
    } catch (NumberFormatException e) {
      throw bad(line, "'" + s + "' is out of range");
    }
  }

  private static int shardId(String s, int line) {
    long id = number(s, line);
    if (id < 1 || id > 65535) throw bad(line, "shard id " + id + " outside 1-65535");
    return (int) id;
  }

  private static String address(String a, int line) {
    int colon = a.lastIndexOf(':');
    if (colon <= 0) throw bad(line, "address '" + a + "', expected host:port");
    long port = number(a.substring(colon + 1), line);
    if (port < 1 || port > 65535) throw bad(line, "address '" + a + "', expected host:port");
    return a;
  }

  private static int[] range(String w, int buckets, int line) {
    int dash = w.indexOf('-');
    if (dash < 0) throw bad(line, "bucket range '" + w + "', expected FIRST-LAST");
    long f = number(w.substring(0, dash), line), l = number(w.substring(dash + 1), line);
    if (f > l || l >= buckets) {
      throw bad(line, "bucket range '" + w + "' outside 0-" + (buckets - 1));
    }
    return new int[] {(int) f, (int) l};
  }
}
