package io.relgraph.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * A differential run: a few hundred random commands (seeded; the seed is printed and
 * RELGRAPH_DIFF_SEED replays it; RELGRAPH_DIFF_COMMANDS sets the count) through this client and
 * through relgraph-cli --json (the C++ client), whose answers must agree. Two servers take the
 * same commands: a write goes to server A through this client and to server B through the CLI
 * (times the server's clock chose are masked); a read goes to server A through both, so both
 * see one state. The CLI runs as one interactive session per server, one JSON line a command.
 */
class DifferentialTest {
  static final long T0 = 1_700_000_000_000L;

  record Cmd(String line, boolean write, Supplier<Object> run) {}

  /** A relgraph-cli --json session: a command line in, one JSON line out. */
  static final class Cli implements AutoCloseable {
    final Process p;
    final Writer in;
    final BufferedReader out;

    Cli(TestServer s) throws Exception {
      p = new ProcessBuilder(TestServer.cli(), "-h", "127.0.0.1", "-p", String.valueOf(s.port),
          "--json").redirectError(ProcessBuilder.Redirect.INHERIT).start();
      in = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8);
      out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    }

    Object run(String line) throws Exception {
      in.write(line + "\n");
      in.flush();
      String reply = out.readLine();
      if (reply == null) throw new AssertionError("relgraph-cli ended at: " + line);
      return Json.parse(reply);
    }

    @Override
    public void close() throws Exception {
      in.close();
      p.waitFor();
    }
  }

  static BigInteger n(long v) {
    return new BigInteger(Long.toUnsignedString(v));
  }

  static Map<String, Object> obj(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
    return m;
  }

  static Object page(Page p, boolean counted) {
    List<Object> entries = new ArrayList<>();
    for (PageEntry e : p.entries()) {
      entries.add(obj("user", n(e.user()), "ts", n(e.ts()), "viewer_relation",
          e.viewerRelation().toString(), "mutual", e.mutual()));
    }
    Map<String, Object> m = obj("entries", entries, "next",
        p.next() == null ? null : p.next().ts() + ":" + Long.toUnsignedString(p.next().user()));
    if (counted) m.put("total", n(p.total()));
    return m;
  }

  static Object feed(FeedPage p) {
    List<Object> entries = new ArrayList<>();
    for (Post e : p.entries()) {
      entries.add(obj("post", n(e.post()), "author", n(e.author()), "ts", n(e.ts()), "kind",
          n(e.kind())));
    }
    return obj("entries", entries, "next",
        p.next() == null ? null : p.next().ts() + ":" + Long.toUnsignedString(p.next().post()));
  }

  static Object follow(FollowResult r) {
    return obj("created", r.created(), "relation", r.relation().toString(), "followed_at",
        n(r.followedAt()));
  }

  static Object ids(List<Long> l) {
    List<Object> out = new ArrayList<>();
    for (long v : l) out.add(n(v));
    return out;
  }

  /** One random command over a small universe of users, so that commands meet. */
  static Cmd generate(Random r, long[] clock, RelgraphClient c) {
    long a = 1 + r.nextInt(12);
    long b = 1 + r.nextInt(12);
    int k = r.nextInt(100);
    if (k < 22) {
      long ts = clock[0] += 1 + r.nextInt(3);
      return new Cmd("follow " + a + " " + b + " " + ts, true, () -> follow(c.followAt(a, b, ts)));
    }
    if (k < 27) return new Cmd("unfollow " + a + " " + b, true, () -> obj("removed", c.unfollow(a, b)));
    if (k < 32) {
      return new Cmd("relation " + a + " " + b, false,
          () -> obj("relation", c.relation(a, b).toString()));
    }
    if (k < 36) {
      List<Long> others = new ArrayList<>();
      int count = 1 + r.nextInt(5);
      for (int i = 0; i < count; i++) {
        long o = 1 + r.nextInt(12);
        if (!others.contains(o)) others.add(o);
      }
      StringBuilder line = new StringBuilder("relations " + a);
      for (long o : others) line.append(' ').append(o);
      return new Cmd(line.toString(), false, () -> {
        List<Relation> rel = c.relations(a, others);
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < others.size(); i++) m.put(String.valueOf(others.get(i)), rel.get(i).toString());
        return m;
      });
    }
    if (k < 52) {
      String[] names = {"following", "fans", "friends", "blocks", "requests"};
      int which = r.nextInt(names.length);
      int limit = 1 + r.nextInt(6);
      PageQuery q = PageQuery.of(a, limit);
      StringBuilder line = new StringBuilder(names[which] + " " + a + " --limit=" + limit);
      int mode = r.nextInt(3);
      if (mode == 0) {
        int off = r.nextInt(4);
        q = q.withOffset(off);
        line.append(" --offset=").append(off);
      } else if (mode == 1) {
        Cursor cur = new Cursor(T0 + (long) (r.nextDouble() * (clock[0] - T0 + 2)), 1 + r.nextInt(12));
        q = q.withAfter(cur);
        line.append(" --after=").append(cur.ts()).append(':').append(cur.user());
      }
      if (r.nextBoolean()) {
        long v = 1 + r.nextInt(12);
        q = q.withViewer(v);
        line.append(" --viewer=").append(v);
      }
      PageQuery fq = q;
      return new Cmd(line.toString(), false, () -> switch (which) {
        case 0 -> page(c.following(fq), false);
        case 1 -> page(c.fans(fq), false);
        case 2 -> page(c.friends(fq), false);
        case 3 -> page(c.blocks(fq), true);
        default -> page(c.requests(fq), true);
      });
    }
    if (k < 56) {
      return new Cmd("counts " + a, false, () -> {
        Counts x = c.counts(a);
        return obj("following", n(x.following()), "fans", n(x.fans()), "friends", n(x.friends()));
      });
    }
    if (k < 60) {
      int limit = r.nextInt(5);
      return new Cmd("known-followers " + a + " " + b + " " + limit, false, () -> {
        KnownFollowers x = c.knownFollowers(a, b, limit);
        return obj("total", n(x.total()), "users", ids(x.users()));
      });
    }
    if (k < 61) {
      return new Cmd("remove-user " + a, true, () -> obj("edges_removed", n(c.removeUser(a))));
    }
    if (k < 68) {
      long post = 1 + r.nextInt(60);
      int kind = r.nextInt(4);
      long ts = clock[0] += 1 + r.nextInt(3);
      return new Cmd("publish " + a + " " + post + " " + kind + " " + ts, true, () -> {
        PublishResult x = c.publishAt(a, post, kind, ts);
        return obj("ts", n(x.ts()), "retained", x.retained(), "evicted", n(x.evicted()));
      });
    }
    if (k < 70) {
      long post = 1 + r.nextInt(60);
      return new Cmd("delete-post " + a + " " + post, true, () -> {
        c.deletePost(a, post);
        return obj("deleted", true);
      });
    }
    if (k < 76) {
      boolean timeline = r.nextBoolean();
      int limit = 1 + r.nextInt(5);
      FeedQuery q = FeedQuery.of(a, limit);
      StringBuilder line = new StringBuilder((timeline ? "timeline " : "user-posts ") + a
          + " --limit=" + limit);
      if (r.nextInt(3) == 0) {
        PostCursor cur = new PostCursor(T0 + (long) (r.nextDouble() * (clock[0] - T0 + 2)),
            1 + r.nextInt(60));
        q = q.withAfter(cur);
        line.append(" --after=").append(cur.ts()).append(':').append(cur.post());
      }
      if (r.nextInt(3) == 0) {
        int k1 = r.nextInt(4), k2 = r.nextInt(4);
        q = q.withKinds(EventKind.mask(k1, k2));
        line.append(" --kinds=").append(k1).append(',').append(k2);
      }
      FeedQuery fq = q;
      return new Cmd(line.toString(), false, () -> {
        settle(c);  // or the two reads may see a post's fan-out at different points
        return feed(timeline ? c.timeline(fq) : c.userPosts(fq));
      });
    }
    if (k < 78) return new Cmd("mute " + a + " " + b, true, () -> obj("changed", c.mute(a, b)));
    if (k < 79) return new Cmd("unmute " + a + " " + b, true, () -> obj("changed", c.unmute(a, b)));
    if (k < 81) return new Cmd("hide " + a + " " + b, true, () -> obj("changed", c.hide(a, b)));
    if (k < 82) return new Cmd("unhide " + a + " " + b, true, () -> obj("changed", c.unhide(a, b)));
    if (k < 84) {
      boolean mutes = r.nextBoolean();
      return new Cmd((mutes ? "mutes " : "hides ") + a, false,
          () -> obj("users", ids(mutes ? c.mutes(a) : c.hides(a))));
    }
    if (k < 86) {
      return new Cmd("block " + a + " " + b, true, () -> {
        BlockResult x = c.block(a, b);
        return obj("created", x.created(), "ts", n(x.ts()), "unfollowed", (x.removed() & 1) != 0,
            "lost_follower", (x.removed() & 2) != 0, "dropped_request", (x.removed() & 4) != 0);
      });
    }
    if (k < 88) return new Cmd("unblock " + a + " " + b, true, () -> obj("changed", c.unblock(a, b)));
    if (k < 91) {
      boolean on = r.nextBoolean();
      return new Cmd("set-private " + a + (on ? " on" : " off"), true, () -> {
        SetPrivateResult x = c.setPrivate(a, on);
        return obj("changed", x.changed(), "approved", n(x.approved()), "ts", n(x.ts()));
      });
    }
    if (k < 92) return new Cmd("is-private " + a, false, () -> obj("private", c.isPrivate(a)));
    if (k < 95) return new Cmd("approve " + a + " " + b, true, () -> follow(c.approve(a, b)));
    if (k < 97) return new Cmd("reject " + a + " " + b, true, () -> obj("changed", c.reject(a, b)));
    if (k < 99) return new Cmd("withdraw " + a + " " + b, true, () -> obj("changed", c.withdraw(a, b)));
    return new Cmd("ping", false, () -> {
      c.ping();
      return obj("pong", true);
    });
  }

  /** The answer as JSON values; an error as the CLI prints it. */
  static Object mine(Cmd cmd) {
    try {
      return cmd.run().get();
    } catch (ConnectionException e) {
      throw e;
    } catch (RelgraphException e) {
      return obj("error", e.code().wireName(), "message", e.serverMessage());
    }
  }

  /** Objects compared without regard to key order; with mask, clock-chosen times read "clock". */
  static Object normalize(Object v, boolean mask) {
    if (v instanceof Map<?, ?> m) {
      Map<String, Object> out = new TreeMap<>();
      for (Map.Entry<?, ?> e : m.entrySet()) {
        Object x = normalize(e.getValue(), mask);
        String key = (String) e.getKey();
        if (mask && (key.equals("ts") || key.equals("followed_at")) && x instanceof BigInteger t
            && t.longValue() > T0 + 1_000_000_000L) {
          x = "clock";
        }
        out.put(key, x);
      }
      return out;
    }
    if (v instanceof List<?> l) {
      List<Object> out = new ArrayList<>();
      for (Object x : l) out.add(normalize(x, mask));
      return out;
    }
    return v;
  }

  /** Waits until no fan-out is under way (INFO fanout_queue counts the waiting and running). */
  static void settle(RelgraphClient c) {
    try {
      for (int i = 0; i < 1000 && c.info().get("fanout_queue") != 0; i++) Thread.sleep(5);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void randomCommandsAgreeWithRelgraphCli() throws Exception {
    String seedEnv = System.getenv("RELGRAPH_DIFF_SEED");
    long seed = seedEnv != null && !seedEnv.isEmpty() ? Long.parseLong(seedEnv) : System.nanoTime();
    String countEnv = System.getenv("RELGRAPH_DIFF_COMMANDS");
    int count = countEnv != null && !countEnv.isEmpty() ? Integer.parseInt(countEnv) : 400;
    System.out.println("differential: seed " + seed + " (RELGRAPH_DIFF_SEED replays it), "
        + count + " commands");
    Random r = new Random(seed);
    long[] clock = {T0};
    Map<String, Integer> ran = new TreeMap<>();
    try (TestServer a = new TestServer(); TestServer b = new TestServer();
         RelgraphClient c = RelgraphClient.connect(a.options());
         Cli cliA = new Cli(a); Cli cliB = new Cli(b)) {
      for (int i = 0; i < count; i++) {
        Cmd cmd = generate(r, clock, c);
        ran.merge(cmd.line().split(" ")[0], 1, Integer::sum);
        Object ours = normalize(mine(cmd), cmd.write());
        Object theirs = normalize((cmd.write() ? cliB : cliA).run(cmd.line()), cmd.write());
        assertEquals(theirs, ours, "command " + i + " (seed " + seed + "): " + cmd.line());
      }
    }
    System.out.println("differential: commands run " + ran);
  }
}
