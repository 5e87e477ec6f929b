package io.relgraph.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * ClusterClient against a real three-shard cluster (TestCluster): random follows and unfollows
 * (async, 16 in flight) checked reply by reply against a one-node model, then, after a barrier,
 * every user's counts, following, fans and friends pages with viewers on other shards, page
 * iterators, known-followers across shards and relations, compared with the model. One round
 * runs while relgraph-admin moves half of shard 1's buckets to shard 2 (writes to the moving
 * users are answered moved and moving and retried); a client whose map predates the move is
 * then answered moved and follows it. Seed printed; RELGRAPH_CLUSTER_SEED replays.
 */
class ClusterTest {
  static final long TS0 = 1_600_000_000_000L;
  static final int MOVE_FIRST = 0, MOVE_LAST = 682; // half of shard 1's buckets (0-1365 of 4096)

  /** One node holding every follow, with its time. */
  static final class Model {
    final Map<Long, Map<Long, Long>> out = new HashMap<>(), in = new HashMap<>();

    boolean edge(long a, long b) {
      return out.getOrDefault(a, Map.of()).containsKey(b);
    }

    long ts(long a, long b) {
      return out.get(a).get(b);
    }

    void follow(long a, long b, long ts) {
      out.computeIfAbsent(a, k -> new HashMap<>()).put(b, ts);
      in.computeIfAbsent(b, k -> new HashMap<>()).put(a, ts);
    }

    void unfollow(long a, long b) {
      out.getOrDefault(a, new HashMap<>()).remove(b);
      in.getOrDefault(b, new HashMap<>()).remove(a);
    }

    Relation relation(long a, long b) {
      return Relation.of((edge(a, b) ? Relation.FOLLOWING : 0) | (edge(b, a) ? Relation.FOLLOWED_BY : 0));
    }

    List<PageEntry> following(long u, long viewer) {
      List<PageEntry> e = new ArrayList<>();
      out.getOrDefault(u, Map.of()).forEach((x, ts) -> e.add(entry(x, ts, viewer, edge(x, u))));
      return newestFirst(e);
    }

    List<PageEntry> fans(long u, long viewer) {
      List<PageEntry> e = new ArrayList<>();
      in.getOrDefault(u, Map.of()).forEach((x, ts) -> e.add(entry(x, ts, viewer, edge(u, x))));
      return newestFirst(e);
    }

    List<PageEntry> friends(long u, long viewer) {
      List<PageEntry> e = new ArrayList<>();
      out.getOrDefault(u, Map.of()).forEach((x, ts) -> {
        if (edge(x, u)) e.add(entry(x, Math.max(ts, ts(x, u)), viewer, true));
      });
      return newestFirst(e);
    }

    Counts counts(long u) {
      return new Counts(out.getOrDefault(u, Map.of()).size(), in.getOrDefault(u, Map.of()).size(),
          friends(u, 0).size());
    }

    KnownFollowers known(long viewer, long target, int limit) {
      List<Long> all = new ArrayList<>();
      for (PageEntry e : following(viewer, 0)) {
        if (edge(e.user(), target)) all.add(e.user());
      }
      return new KnownFollowers(all.size(), all.subList(0, Math.min(limit, all.size())));
    }

    private PageEntry entry(long x, long ts, long viewer, boolean mutual) {
      return new PageEntry(x, ts, viewer == 0 ? Relation.of(0) : relation(viewer, x), mutual);
    }

    private static List<PageEntry> newestFirst(List<PageEntry> e) {
      e.sort(Comparator.comparingLong(PageEntry::ts).reversed());
      return e;
    }
  }

  final Model model = new Model();
  List<Long> users = new ArrayList<>();
  List<Long> moving = new ArrayList<>();
  Random rng;
  long clock = TS0;
  int opsChecked;

  /** Users with random 64-bit ids (unsigned), 8 of them in the buckets the test moves. */
  void pickUsers() {
    Set<Long> seen = new HashSet<>();
    while (moving.size() < 8 || users.size() < 40) {
      long u = rng.nextLong();
      if (u == 0 || !seen.add(u)) continue;
      int b = Xxh3.bucketOf(u, 4096);
      boolean inMove = b >= MOVE_FIRST && b <= MOVE_LAST;
      if (inMove && moving.size() < 8) {
        moving.add(u);
        users.add(u);
      } else if (!inMove && users.size() - moving.size() < 32) {
        users.add(u);
      }
    }
  }

  long pick(List<Long> from) {
    return from.get(rng.nextInt(from.size()));
  }

  /** {@code ops} follows and unfollows, 16 in flight (distinct pairs), each reply checked. */
  void writes(ClusterClient c, int ops, double movingShare) {
    for (int done = 0; done < ops; done += 16) {
      Set<List<Long>> pairs = new HashSet<>();
      List<CompletableFuture<Runnable>> checks = new ArrayList<>();
      while (pairs.size() < 16) {
        long a = rng.nextDouble() < movingShare ? pick(moving) : pick(users);
        long b = rng.nextDouble() < movingShare ? pick(moving) : pick(users);
        if (a == b || !pairs.add(List.of(a, b))) continue;
        String what = "(" + Long.toUnsignedString(a) + ", " + Long.toUnsignedString(b) + ")";
        if (rng.nextInt(10) < 6) {
          boolean exists = model.edge(a, b);
          long sent = ++clock; // unique: pages are ordered by time alone
          if (!exists) model.follow(a, b, sent);
          long at = model.ts(a, b); // an edge kept keeps its time
          checks.add(c.followAtAsync(a, b, sent).thenApply(r -> () -> {
            assertEquals(!exists, r.created(), "follow" + what + " created");
            assertEquals(at, r.followedAt(), "follow" + what + " followed_at");
            assertTrue(r.relation().has(Relation.FOLLOWING), "follow" + what + " relation " + r.relation());
          }));
        } else {
          boolean exists = model.edge(a, b);
          model.unfollow(a, b);
          checks.add(c.unfollowAsync(a, b).thenApply(r -> () -> assertEquals(exists, r, "unfollow" + what)));
        }
      }
      for (CompletableFuture<Runnable> f : checks) {
        Calls.join(f).run();
        opsChecked++;
      }
    }
  }

  /** After a barrier: every user's counts, pages (viewers anywhere), known followers, relations. */
  void checkReads(ClusterClient c) {
    c.barrier(Duration.ofSeconds(30));
    for (long u : users) {
      String who = "user " + Long.toUnsignedString(u);
      assertEquals(model.counts(u), c.counts(u), "counts of " + who);
      long v = pick(users);
      assertEquals(model.following(u, v), c.following(PageQuery.of(u, 1000).withViewer(v)).entries(),
          "following of " + who + " viewed by " + Long.toUnsignedString(v));
      v = pick(users);
      assertEquals(model.fans(u, v), c.fans(PageQuery.of(u, 1000).withViewer(v)).entries(),
          "fans of " + who + " viewed by " + Long.toUnsignedString(v));
      v = pick(users);
      assertEquals(model.friends(u, v), c.friends(PageQuery.of(u, 1000).withViewer(v)).entries(),
          "friends of " + who);
      v = pick(users);
      List<PageEntry> paged = new ArrayList<>();
      c.fansAll(PageQuery.of(u, 3).withViewer(v)).forEach(paged::add); // the cursor, 3 a page
      assertEquals(model.fans(u, v), paged, "fans of " + who + " page by page");
      v = pick(users);
      assertEquals(model.known(v, u, 3), c.knownFollowers(v, u, 3),
          "known followers of " + who + " for " + Long.toUnsignedString(v));
      assertEquals(model.relation(u, v), c.relation(u, v), "relation of " + who);
    }
  }

  @Test
  void randomCommandsAgainstAModelAcrossABucketMove() throws Exception {
    long seed = System.getenv("RELGRAPH_CLUSTER_SEED") != null
        ? Long.parseLong(System.getenv("RELGRAPH_CLUSTER_SEED")) : System.nanoTime();
    System.out.println("ClusterTest seed " + seed + " (RELGRAPH_CLUSTER_SEED replays)");
    rng = new Random(seed);
    pickUsers();
    try (TestCluster cluster = new TestCluster(3);
         ClusterClient c = ClusterClient.connect(ClusterOptions.seeds(cluster.address(3)));
         ClusterClient stale = ClusterClient.connect(cluster.address(2))) {
      ShardMap before = c.map();
      assertEquals(3, before.shards().size());
      assertEquals(1, before.ownerOfBucket(MOVE_LAST));
      for (int round = 0; round < 2; round++) {
        writes(c, 160, 0.3);
        checkReads(c);
      }
      // The move runs while the writers go on, a third of their users moving.
      Process move = cluster.adminProcess("cluster", "move-bucket", "--nats=" + cluster.natsUrl(),
          "--buckets=" + MOVE_FIRST + "-" + MOVE_LAST, "--to=2", "--timeout-ms=60000");
      int rounds = 0;
      while (move.isAlive() || rounds < 2) {
        writes(c, 32, 0.5);
        rounds++;
      }
      String said = new String(move.getInputStream().readAllBytes());
      assertEquals(0, move.waitFor(), "move-bucket: " + said);
      checkReads(c);
      assertEquals(2, c.map().ownerOfBucket(MOVE_LAST), "the map after the move: " + c.map());
      ClusterClient.Stats s = c.stats();
      System.out.println("ClusterTest: " + opsChecked + " writes checked, " + rounds
          + " write rounds during the move; " + s);
      assertTrue(s.movedFollowed() >= 1, "the writer's map predates the move: " + s);
      // A client that has not read the map since before the move asks shard 1 and is sent on.
      assertEquals(before.version(), stale.map().version());
      for (long u : moving) {
        assertEquals(model.counts(u), stale.counts(u), "counts through the stale client");
      }
      assertTrue(stale.stats().movedFollowed() >= 1, "stale client: " + stale.stats());
      assertTrue(stale.map().newerThan(before));
      writes(stale, 32, 0.5);
      checkReads(c);
    }
  }

  @Test
  void commandsAboutNoUserGoToANamedShard() throws Exception {
    try (TestCluster cluster = new TestCluster(2);
         ClusterClient c = ClusterClient.connect(cluster.address(1))) {
      RelgraphException e = assertThrows(RelgraphException.class,
          () -> Calls.join(c.call(Opcode.INFO, Codec.empty(), Codec.INFO)));
      assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
      assertTrue(e.getMessage().contains("about no user"), e.getMessage());
      for (int id = 1; id <= 2; id++) assertEquals(id, c.shard(id).info().get("cluster_shard_id"));
      c.shard(2).ping();
      assertEquals(ErrorCode.INVALID_ARGUMENT, assertThrows(RelgraphException.class, () -> c.shard(3)).code());
      // A raw page whose viewer is on another shard: the typed call completes it, call refuses.
      long a = 1, b = 2;
      while (c.map().ownerOf(b) == c.map().ownerOf(a)) b++;
      c.follow(b, a);
      c.barrier(Duration.ofSeconds(30));
      long viewer = b;
      e = assertThrows(RelgraphException.class, () -> Calls.join(
          c.call(Opcode.FANS, Codec.pageQuery(PageQuery.of(a, 10).withViewer(viewer)), Codec.PAGE)));
      assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
      assertEquals(List.of(new PageEntry(b, c.fans(PageQuery.of(a, 10)).entries().get(0).ts(),
          Relation.of(0), false)), c.fans(PageQuery.of(a, 10).withViewer(viewer)).entries());
      assertEquals(ErrorCode.INVALID_USER_ID,
          assertThrows(RelgraphException.class, () -> c.knownFollowers(0, a, 5)).code());
    }
  }
}
