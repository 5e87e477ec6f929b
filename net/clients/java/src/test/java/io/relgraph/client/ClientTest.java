package io.relgraph.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The client against a real relgraphd: typed errors, pipelining, the pool, reconnects, iterators. */
class ClientTest {
  static TestServer server;

  @BeforeAll
  static void start() throws Exception {
    server = new TestServer();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static RelgraphException error(ErrorCode code, Runnable r) {
    RelgraphException e = assertThrows(RelgraphException.class, r::run);
    assertEquals(code, e.code(), e.toString());
    assertFalse(e instanceof ConnectionException, e.toString());
    return e;
  }

  @Test
  void errorsAreTypedAndTheConnectionStaysUsable() {
    try (RelgraphClient c = RelgraphClient.connect(server.options().withPoolSize(1))) {
      error(ErrorCode.SELF_FOLLOW, () -> c.follow(7001, 7001));
      error(ErrorCode.INVALID_USER_ID, () -> c.follow(0, 7001));
      error(ErrorCode.INVALID_USER_ID, () -> c.counts(0));
      error(ErrorCode.INVALID_ARGUMENT, () -> c.following(PageQuery.of(7001, 0)));
      error(ErrorCode.INVALID_ARGUMENT, () -> c.following(PageQuery.of(7001, 1001)));
      error(ErrorCode.INVALID_ARGUMENT, () -> c.publish(7001, 0, 0));
      error(ErrorCode.INVALID_ARGUMENT, () -> c.publish(7001, 5, 64));
      error(ErrorCode.INVALID_ARGUMENT, () -> c.followAt(7001, 7002, 1L << 42));
      error(ErrorCode.NOT_FOUND, () -> c.deletePost(7001, 99));
      error(ErrorCode.NOT_FOUND, () -> c.approve(7001, 7002));
      error(ErrorCode.INVALID_ARGUMENT, () -> c.mute(7001, 7001));
      RelgraphException e = error(ErrorCode.NOT_FOUND, () -> c.deleteCursor("nobody"));
      assertEquals(Opcode.DELETE_CURSOR, e.op());
      // An unknown user is not an error: zeros and empty pages.
      assertEquals(new Counts(0, 0, 0), c.counts(987654321L));
      assertEquals(new Page(-1, List.of(), null), c.fans(PageQuery.of(987654321L, 10)));
      assertFalse(c.unfollow(987654321L, 7001));
      // Ids are u64: the largest works as any other.
      long big = -1L; // 2^64 - 1
      assertTrue(c.follow(big, 7001).created());
      assertEquals(List.of(big), c.fans(PageQuery.of(7001, 5)).entries().stream()
          .map(PageEntry::user).toList());
      assertEquals(1, c.info().get("connections_total") > 0 ? 1 : 0);
    }
  }

  @Test
  void concurrentPipelinedCallsGetTheirOwnReplies() throws Exception {
    // User 8000 + i follows 9000 + i for even i only; 16 threads ask relation(8000+i, 9000+i)
    // on one connection, many in flight each: every answer must be its own request's.
    try (RelgraphClient c = RelgraphClient.connect(server.options().withPoolSize(1))) {
      int n = 400;
      List<CompletableFuture<FollowResult>> setup = new ArrayList<>();
      for (int i = 0; i < n; i += 2) setup.add(c.followAsync(8000 + i, 9000 + i));
      for (CompletableFuture<FollowResult> f : setup) assertTrue(f.join().created());
      ExecutorService pool = Executors.newFixedThreadPool(16);
      List<Future<Integer>> done = new ArrayList<>();
      for (int t = 0; t < 16; t++) {
        final int seed = t;
        done.add(pool.submit(() -> {
          java.util.Random r = new java.util.Random(seed);
          List<CompletableFuture<Relation>> fs = new ArrayList<>();
          List<Integer> asked = new ArrayList<>();
          for (int k = 0; k < 500; k++) {
            int i = r.nextInt(n);
            asked.add(i);
            fs.add(c.relationAsync(8000 + i, 9000 + i));
          }
          for (int k = 0; k < fs.size(); k++) {
            int i = asked.get(k);
            assertEquals(i % 2 == 0 ? Relation.of(1) : Relation.of(0), fs.get(k).join(), "pair " + i);
          }
          return fs.size();
        }));
      }
      int total = 0;
      for (Future<Integer> f : done) total += f.get();
      pool.shutdown();
      assertEquals(16 * 500, total);
      // A Pipeline: one write, typed futures, a per-request error among them.
      Pipeline p = c.pipeline();
      CompletableFuture<Counts> counts = p.countsAsync(8000);
      CompletableFuture<FollowResult> self = p.followAsync(8000, 8000);
      CompletableFuture<Relation> rel = p.relationAsync(8000, 9000);
      p.flush();
      assertEquals(new Counts(1, 0, 0), counts.join());
      assertEquals(ErrorCode.SELF_FOLLOW,
          assertThrows(RelgraphException.class, () -> Calls.join(self)).code());
      assertEquals(Relation.of(1), rel.join());
    }
  }

  @Test
  void poolSpreadsCallsOverItsConnections() throws Exception {
    try (RelgraphClient c = RelgraphClient.connect(server.options().withPoolSize(4))) {
      long before = c.info().get("connections_total");
      ExecutorService pool = Executors.newFixedThreadPool(8);
      List<Future<?>> fs = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        final long u = 10_000 + t;
        fs.add(pool.submit(() -> {
          for (int k = 1; k <= 200; k++) c.followAt(u, 20_000 + k, 1_700_000_000_000L + k);
        }));
      }
      for (Future<?> f : fs) f.get();
      pool.shutdown();
      for (int t = 0; t < 8; t++) assertEquals(new Counts(200, 0, 0), c.counts(10_000 + t));
      // connect() dialed slot 0 and the first info() slot 1: the calls dialed the other two,
      // and no more.
      assertEquals(before + 2, c.info().get("connections_total"));
    }
  }

  @Test
  void iteratorsFollowTheCursor() {
    try (RelgraphClient c = RelgraphClient.connect(server.options())) {
      long t0 = 1_700_000_000_000L;
      for (int k = 1; k <= 250; k++) c.followAt(30_000 + k, 30_000, t0 + k);
      List<Long> seen = new ArrayList<>();
      PageIterator<PageEntry> it = c.fansAll(PageQuery.of(30_000, 7).withViewer(30_001));
      for (PageEntry e : it) seen.add(e.user());
      assertEquals(250, seen.size());
      for (int k = 0; k < 250; k++) assertEquals(30_000 + 250 - k, (long) seen.get(k));
      assertEquals(36, it.pages()); // 35 full pages and one of 5; the last has no next
      for (int k = 1; k <= 12; k++) c.publishAt(30_001, k, k % 3, t0 + k);
      List<Long> posts = new ArrayList<>();
      c.userPostsAll(FeedQuery.of(30_001, 5).withKinds(EventKind.mask(0, 1)))
          .forEach(p -> posts.add(p.post()));
      assertEquals(List.of(12L, 10L, 9L, 7L, 6L, 4L, 3L, 1L), posts);
    }
  }

  @Test
  void reconnectsAfterAServerRestart() throws Exception {
    try (TestServer s = new TestServer();
         RelgraphClient c = RelgraphClient.connect(s.options().withPoolSize(2)
             .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200)))) {
      assertTrue(c.follow(1, 2).created());
      for (int round = 0; round < 2; round++) {
        s.restart();
        // The pooled connections are dead: calls dial again and carry on (retry-safe).
        assertTrue(c.relation(1, 2).has(Relation.FOLLOWING));
        assertEquals(round == 0, c.follow(2, 1).created());
        assertEquals(new Counts(1, 1, 1), c.counts(1));
      }
      // While the server is down a call fails with a ConnectionException once retries run out.
      s.stop();
      try (RelgraphClient quick = RelgraphClient.create(s.options().withMaxRetries(1)
          .withBackoff(Duration.ofMillis(5), Duration.ofMillis(10)))) {
        ConnectionException e = assertThrows(ConnectionException.class, quick::ping);
        assertFalse(e.sent());
      }
      s.start();
      assertEquals(new Counts(1, 1, 1), c.counts(1));
    }
  }

  @Test
  void callTimeoutIsATypedError() throws Exception {
    List<DocTables.Row> rows = DocTables.table(DocTables.doc(), "## Examples");
    List<ScriptedServer.Step> script = List.of(
        ScriptedServer.Step.of("HELLO", rows.get(0).hex().get(0), rows.get(0).hex().get(1)),
        ScriptedServer.Step.of("PING, never answered", rows.get(1).hex().get(0)));
    try (ScriptedServer srv = new ScriptedServer(ScriptedServer.sessions(script));
         RelgraphClient c = RelgraphClient.connect(ClientOptions.to(srv.address()).withToken("secret")
             .withPoolSize(1).withCallTimeout(Duration.ofMillis(300)))) {
      RelgraphException e = assertThrows(RelgraphException.class, c::ping);
      assertEquals(ErrorCode.TIMEOUT, e.code());
      assertEquals(List.of(), srv.mismatches);
    }
  }

  @Test
  void aBrokenConnectionRetriesOnlyRetrySafeCommands() throws Exception {
    List<DocTables.Row> rows = DocTables.table(DocTables.doc(), "## Examples");
    byte[] hello = rows.get(0).hex().get(0);
    byte[] helloReply = rows.get(0).hex().get(1);
    byte[] ping = rows.get(1).hex().get(0);
    // PING is retry-safe: the server drops the connection after reading it; the client dials
    // again and sends it again (request 2 of the new connection).
    List<List<ScriptedServer.Step>> sessions = List.of(
        List.of(ScriptedServer.Step.of("HELLO", hello, helloReply),
            new ScriptedServer.Step("PING, dropped", ping, List.of(), true)),
        List.of(ScriptedServer.Step.of("HELLO again", hello, helloReply),
            ScriptedServer.Step.of("PING again", ping, rows.get(1).hex().get(1))));
    try (ScriptedServer srv = new ScriptedServer(sessions);
         RelgraphClient c = RelgraphClient.connect(ClientOptions.to(srv.address()).withToken("secret")
             .withPoolSize(1).withBackoff(Duration.ofMillis(5), Duration.ofMillis(20)))) {
      c.ping();
      assertEquals(List.of(), srv.mismatches);
      assertEquals(4, srv.stepsDone);
    }
    // PROMOTE is not: its outcome is unknown, and the client says so instead of sending it again.
    byte[] promote = Connection.frame(2, Opcode.PROMOTE, Codec.promote(false));
    sessions = List.of(List.of(ScriptedServer.Step.of("HELLO", hello, helloReply),
        new ScriptedServer.Step("PROMOTE, dropped", promote, List.of(), true)));
    try (ScriptedServer srv = new ScriptedServer(sessions);
         RelgraphClient c = RelgraphClient.connect(ClientOptions.to(srv.address()).withToken("secret")
             .withPoolSize(1).withBackoff(Duration.ofMillis(5), Duration.ofMillis(20)))) {
      ConnectionException e = assertThrows(ConnectionException.class, () -> c.promote(false));
      assertTrue(e.sent(), "the outcome is unknown");
      assertEquals(Opcode.PROMOTE, e.op());
      assertEquals(List.of(), srv.mismatches);
    }
  }

  @Test
  void closingEndsCallsWaitingForARetry() throws Exception {
    int port = TestServer.freePort(); // nothing listens: every dial fails and is retried
    RelgraphClient c = RelgraphClient.create(ClientOptions.to("127.0.0.1:" + port)
        .withBackoff(Duration.ofMillis(200), Duration.ofMillis(400)));
    CompletableFuture<Void> f = c.pingAsync(); // its first dial failed; a retry is scheduled
    c.close();
    // The retry finds the client closed: the future completes (it must not be left hanging).
    java.util.concurrent.ExecutionException e = assertThrows(
        java.util.concurrent.ExecutionException.class, () -> f.get(20, java.util.concurrent.TimeUnit.SECONDS));
    assertTrue(e.getCause() instanceof ConnectionException, e.getCause().toString());
  }

  @Test
  void authToken() throws Exception {
    try (TestServer s = new TestServer("--auth-token=s3cret")) {
      RelgraphException e = assertThrows(RelgraphException.class,
          () -> RelgraphClient.connect(s.options().withToken("wrong")).close());
      assertEquals(ErrorCode.UNAUTHENTICATED, e.code());
      try (RelgraphClient c = RelgraphClient.connect(s.options().withToken("s3cret"))) {
        c.ping();
      }
    }
  }

  @Test
  void readOnlyWritesGoToThePrimary() throws Exception {
    try (TestServer primary = new TestServer();
         TestServer replica = new TestServer("--replica-of=" + primary.address());
         RelgraphClient c = RelgraphClient.connect(replica.options())) {
      assertTrue(c.follow(41, 42).created()); // refused by the replica, sent to the primary
      assertEquals(primary.port, c.address().getPort());
      try (RelgraphClient p = RelgraphClient.connect(primary.options())) {
        assertEquals(Relation.of(1), p.relation(41, 42));
      }
      try (RelgraphClient noRedirect = RelgraphClient.connect(replica.options().withRedirect(false))) {
        RelgraphException e = assertThrows(RelgraphException.class, () -> noRedirect.follow(43, 44));
        assertEquals(ErrorCode.READ_ONLY, e.code());
        assertEquals(primary.address(), e.serverMessage());
        assertEquals(1, noRedirect.replication().role());
      }
    }
  }

  @Test
  void snapshotTransferAndReplication() throws Exception {
    try (TestServer s = new TestServer(); RelgraphClient c = RelgraphClient.connect(s.options())) {
      for (int k = 1; k <= 20; k++) c.follow(50, 50 + k);
      SnapshotInfo snap = c.snapshot();
      assertEquals(20, snap.edges());
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      FetchSnapshotReply r = c.fetchSnapshot(out);
      assertEquals(snap.lsn(), r.lsn());
      assertEquals(r.fileBytes(), out.size());
      try (ReplicationStream rs = c.replicate(new ReplicateRequest(1, 1, 0, "java-test"))) {
        long next = 1;
        while (next <= 20) {
          Records recs = rs.next(Duration.ofSeconds(10));
          assertTrue(recs != null, "RECORDS in time");
          if (!recs.records().isEmpty()) assertEquals(next, recs.firstLsn());
          next += recs.records().size();
          rs.ack(next - 1, next - 1);
        }
      }
      assertEquals(0, c.replication().role());
      Position p = c.position();
      assertEquals(0, p.role());
      assertTrue(p.appliedLsn() >= 20 && p.durableLsn() <= p.appliedLsn(), p.toString());
      RelgraphException outside = assertThrows(RelgraphException.class, c::shardMap);
      assertEquals(ErrorCode.UNSUPPORTED, outside.code());
    }
  }
}
