package io.relgraph.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * ClusterClient and a shard served by a replication group (docs/cluster.md, "Shard replicas"):
 * shard 1 is a group of two members, shard 2 one node. The client finds the group's primary by
 * POSITION, follows a switchover (the old primary refuses with read_only) and waits out the
 * loss of the primary (SIGKILL; the member is started again, as its group needs one synchronous
 * replica); every acknowledged follow is then on both shards it concerns.
 */
class ClusterGroupTest {
  final ClusterTest.Model model = new ClusterTest.Model();
  final Random rng = new Random(48);
  long clock = ClusterTest.TS0;

  /** Follows of pairs without an edge, 16 in flight; exact: created must be true. */
  List<CompletableFuture<FollowResult>> follows(ClusterClient c, List<Long> users, int n) {
    List<CompletableFuture<FollowResult>> out = new ArrayList<>();
    while (out.size() < n) {
      long a = users.get(rng.nextInt(users.size())), b = users.get(rng.nextInt(users.size()));
      if (a == b || model.edge(a, b)) continue;
      long ts = ++clock;
      model.follow(a, b, ts);
      out.add(c.followAtAsync(a, b, ts));
    }
    return out;
  }

  void followsChecked(ClusterClient c, List<Long> users, int n) {
    for (int done = 0; done < n; done += 16) {
      for (CompletableFuture<FollowResult> f : follows(c, users, 16)) {
        assertTrue(Calls.join(f).created());
      }
    }
  }

  @Test
  void aGroupShardIsServedByItsPrimaryThroughASwitchoverAndAFailover() throws Exception {
    try (TestCluster cluster = new TestCluster(2, 2);
         ClusterClient c = ClusterClient.connect(ClusterOptions.seeds(cluster.address(2))
             .withFailoverTimeout(Duration.ofSeconds(20)))) {
      assertTrue(c.map().find(1).grouped());
      assertEquals(List.of(cluster.address(1, 0), cluster.address(1, 1)), c.map().find(1).members());
      int primary = -1;
      for (int i = 0; i < 500 && primary < 0; i++) {
        primary = cluster.primaryOf(1);
        if (primary < 0) Thread.sleep(20);
      }
      assertTrue(primary >= 0, "shard 1's group elected no primary");
      List<Long> users = new ArrayList<>();
      int[] perShard = new int[3];
      for (long u = 1; perShard[1] < 12 || perShard[2] < 12; u++) {
        int owner = c.map().ownerOf(u);
        if (perShard[owner] < 12) {
          perShard[owner]++;
          users.add(u);
        }
      }

      followsChecked(c, users, 64);
      assertTrue(c.stats().primaryLookups() >= 1, "the primary was looked up: " + c.stats());
      assertEquals(cluster.address(1, primary), c.shard(1).address().getHostString() + ":"
          + c.shard(1).address().getPort());

      // A switchover: the old primary, now a replica, refuses writes with read_only.
      cluster.admin("group", "switchover", "--nats=" + cluster.natsUrl(), "--group=shard-1");
      int next = cluster.primaryOf(1);
      assertNotEquals(primary, next);
      long changes = c.stats().primaryChanges();
      followsChecked(c, users, 64);
      assertTrue(c.stats().primaryChanges() > changes, "read_only followed: " + c.stats());

      // The primary killed: writes wait for the group's next primary (after the lease), and
      // for its synchronous replica: the killed member, started again once the other leads. A write whose connection broke
      // after it was sent is sent again (FOLLOW is retry-safe): its edge is there either way.
      cluster.killNode(1, next);
      List<CompletableFuture<FollowResult>> inFlight = follows(c, users, 48);
      int survivor = -1;
      for (int i = 0; i < 1000 && survivor < 0; i++) { // the lease lapses first (1.5 s)
        survivor = cluster.primaryOf(1);
        if (survivor < 0) Thread.sleep(20);
      }
      assertEquals(1 - next, survivor, "the surviving member took the lease");
      cluster.startNode(1, next);
      for (CompletableFuture<FollowResult> f : inFlight) {
        assertTrue(Calls.join(f).relation().has(Relation.FOLLOWING));
      }
      followsChecked(c, users, 32);

      c.barrier(Duration.ofSeconds(30));
      for (long u : users) {
        String who = "user " + u + " (shard " + c.map().ownerOf(u) + ")";
        assertEquals(model.counts(u), c.counts(u), "counts of " + who);
        assertEquals(model.following(u, 0), c.following(PageQuery.of(u, 1000)).entries(), "following of " + who);
        assertEquals(model.fans(u, 0), c.fans(PageQuery.of(u, 1000)).entries(), "fans of " + who);
      }
      System.out.println("ClusterGroupTest: " + c.stats());
    }
  }
}
