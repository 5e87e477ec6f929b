package io.relgraph.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The hex tables of docs/protocol.md ("Examples", "Stream example", the NOTICE, the version-1
 * HELLO), read at test time: a scripted server requires every request this client sends to be
 * the doc's bytes and answers with the doc's reply; the typed values decoded are checked.
 */
class ConformanceTest {
  static final long T0 = 1_700_000_000_000L;

  private static PageEntry entry(long user, long ts, int rel, boolean mutual) {
    return new PageEntry(user, ts, Relation.of(rel), mutual);
  }

  private static RelgraphException error(ErrorCode code, Runnable r) {
    RelgraphException e = assertThrows(RelgraphException.class, r::run);
    assertEquals(code, e.code());
    return e;
  }

  @Test
  void examplesTableByteForByte() throws Exception {
    List<DocTables.Row> rows = DocTables.table(DocTables.doc(), "## Examples");
    // Each row's call, in the table's order, with the decoded reply checked. Row 0 is HELLO.
    List<Consumer<RelgraphClient>> calls = new ArrayList<>();
    calls.add(c -> {
      Hello h = c.hello();
      assertEquals(new Hello(2, 1 << 20, "relgraphd", "0.1.0"), h);
    });
    calls.add(c -> c.ping());
    calls.add(c -> assertEquals(new FollowResult(true, Relation.of(1), T0), c.followAt(1, 2, T0)));
    calls.add(c -> assertEquals(new FollowResult(true, Relation.of(3), T0 + 1000),
        c.followAt(2, 1, T0 + 1000)));
    calls.add(c -> assertEquals(new FollowResult(true, Relation.of(1), T0 + 2000),
        c.followAt(1, 3, T0 + 2000)));
    calls.add(c -> assertEquals(new FollowResult(true, Relation.of(1), T0 + 3000),
        c.followAt(3, 2, T0 + 3000)));
    calls.add(c -> {
      FollowResult r = c.followAt(1, 2, T0 + 9000);
      assertEquals(new FollowResult(false, Relation.of(3), T0), r);
      assertEquals("mutual", r.relation().toString());
    });
    calls.add(c -> assertEquals(Relation.of(Relation.MUTUAL), c.relation(1, 2)));
    calls.add(c -> assertEquals(List.of(Relation.of(3), Relation.of(1), Relation.of(0)),
        c.relations(1, List.of(2L, 3L, 4L))));
    calls.add(c -> assertEquals(new Page(-1, List.of(entry(3, T0 + 2000, 2, false),
        entry(2, T0, 0, true)), null), c.following(PageQuery.of(1, 20).withViewer(2))));
    calls.add(c -> assertEquals(new Page(-1, List.of(entry(3, T0 + 2000, 0, false)),
        new Cursor(T0 + 2000, 3)), c.following(PageQuery.of(1, 1))));
    calls.add(c -> assertEquals(new Page(-1, List.of(entry(2, T0, 0, true)), null),
        c.following(PageQuery.of(1, 1).withAfter(new Cursor(T0 + 2000, 3)))));
    calls.add(c -> assertEquals(new Counts(2, 1, 1), c.counts(1)));
    calls.add(c -> assertEquals(new KnownFollowers(1, List.of(3L)), c.knownFollowers(1, 2, 3)));
    calls.add(c -> assertTrue(c.unfollow(1, 3)));
    calls.add(c -> assertEquals(new PublishResult(T0 + 5000, true, 0),
        c.publishAt(2, 500, 0, T0 + 5000)));
    calls.add(c -> assertEquals(new FeedPage(List.of(new Post(500, 2, T0 + 5000, 0)), null),
        c.timeline(FeedQuery.of(1, 10))));
    calls.add(c -> assertTrue(c.mute(1, 2)));
    calls.add(c -> c.deletePost(2, 500));
    calls.add(c -> {
      RelgraphException e = error(ErrorCode.SELF_FOLLOW, () -> c.follow(1, 1));
      assertEquals("user 1 cannot follow itself", e.serverMessage());
      assertEquals(0, e.detail());
      assertEquals(Opcode.FOLLOW, e.op());
    });
    calls.add(c -> assertEquals(new SnapshotInfo(7, 5, 100, T0), c.snapshot()));
    calls.add(c -> assertEquals(3L, c.removeUser(2)));
    calls.add(c -> assertEquals(new SetPrivateResult(true, 0, T0 + 10000), c.setPrivate(3, true)));
    calls.add(c -> assertTrue(c.isPrivate(3)));
    calls.add(c -> {
      FollowResult r = c.followAt(1, 3, T0 + 6000);
      assertEquals(new FollowResult(true, Relation.of(Relation.REQUESTED), T0 + 6000), r);
      assertEquals("requested", r.relation().toString());
    });
    calls.add(c -> assertEquals(new FollowResult(true, Relation.of(4), T0 + 7000),
        c.followAt(4, 3, T0 + 7000)));
    calls.add(c -> assertEquals(new Page(2, List.of(entry(4, T0 + 7000, 0, false),
        entry(1, T0 + 6000, 0, false)), null), c.requests(PageQuery.of(3, 10).withViewer(1))));
    calls.add(c -> assertTrue(c.withdraw(4, 3)));
    calls.add(c -> assertEquals(new FollowResult(true, Relation.of(1), T0 + 10000), c.approve(3, 1)));
    calls.add(c -> assertEquals(new BlockResult(true, T0 + 10000, 2), c.block(3, 1)));
    calls.add(c -> {
      RelgraphException e = error(ErrorCode.BLOCKED, () -> c.follow(1, 3));
      assertEquals("user 1 may not follow user 3: a block stands between them", e.serverMessage());
      assertEquals(21, e.rawCode());
    });
    calls.add(c -> {
      List<Relation> r = c.relations(1, List.of(3L));
      assertEquals(List.of(Relation.of(Relation.BLOCKED_BY)), r);
      assertEquals("blocked_by", r.get(0).toString());
    });
    calls.add(c -> assertEquals(new Page(1, List.of(entry(1, T0 + 10000, 0, false)), null),
        c.blocks(PageQuery.of(3, 10))));
    calls.add(c -> assertTrue(c.unblock(3, 1)));
    calls.add(c -> assertFalse(c.reject(3, 4)));
    calls.add(c -> assertEquals(new SetPrivateResult(true, 0, T0 + 10000), c.setPrivate(3, false)));
    calls.add(c -> assertEquals(new SetPrivateResult(false, 0, 0), c.setPrivate(3, false)));
    assertEquals(calls.size(), rows.size(), "rows of the Examples table");

    List<ScriptedServer.Step> script = new ArrayList<>();
    for (DocTables.Row row : rows) {
      byte[] reply = row.hex().get(1);
      if (row.what().startsWith("SNAPSHOT")) { // the doc gives the header: add a body of ours
        WireWriter body = new WireWriter().u64(7).u64(5).u64(100).i64(T0);
        byte[] b = body.toBytes();
        byte[] whole = new byte[reply.length + b.length];
        System.arraycopy(reply, 0, whole, 0, reply.length);
        System.arraycopy(b, 0, whole, reply.length, b.length);
        assertEquals(whole.length - 4, whole[0] & 0xff, "the doc's SNAPSHOT length");
        reply = whole;
      }
      script.add(ScriptedServer.Step.of(row.what(), row.hex().get(0), reply));
    }
    try (ScriptedServer srv = new ScriptedServer(ScriptedServer.sessions(script));
         RelgraphClient c = RelgraphClient.connect(ClientOptions.to(srv.address())
             .withToken("secret").withPoolSize(1).withMaxRetries(0)
             .withCallTimeout(Duration.ofSeconds(5)))) {
      for (int i = 0; i < calls.size(); i++) {
        try {
          calls.get(i).accept(c);
        } catch (AssertionError | RuntimeException e) {
          throw new AssertionError("row " + i + " (" + rows.get(i).what() + "): " + e
              + " mismatches: " + srv.mismatches, e);
        }
      }
      assertEquals(List.of(), srv.mismatches);
      assertEquals(rows.size(), srv.stepsDone);
    }
  }

  @Test
  void noticeIsTheConnectionsEnd() throws Exception {
    String doc = DocTables.doc();
    List<DocTables.Row> examples = DocTables.tables(doc, "## Examples");
    DocTables.Row hello = examples.get(0);
    DocTables.Row notice = examples.stream().filter(r -> r.what().startsWith("NOTICE"))
        .findFirst().orElseThrow();
    byte[] ping = examples.get(1).hex().get(0);
    List<ScriptedServer.Step> script = List.of(
        ScriptedServer.Step.of("HELLO", hello.hex().get(0), hello.hex().get(1)),
        new ScriptedServer.Step("PING, answered by the NOTICE", ping, List.of(notice.hex().get(0)), true));
    try (ScriptedServer srv = new ScriptedServer(ScriptedServer.sessions(script));
         RelgraphClient c = RelgraphClient.connect(ClientOptions.to(srv.address())
             .withToken("secret").withPoolSize(1).withMaxRetries(0))) {
      ConnectionException e = assertThrows(ConnectionException.class, c::ping);
      assertEquals(ErrorCode.RESOURCE_EXHAUSTED, e.code());
      assertEquals("idle for more than 300000 ms", e.serverMessage());
      assertTrue(e.sent());
      assertEquals(List.of(), srv.mismatches);
    }
  }

  @Test
  void versionOneHelloAfterUnsupported() throws Exception {
    String doc = DocTables.doc();
    java.util.regex.Matcher m = java.util.regex.Pattern
        .compile("version-1 exchange with token \"secret\" is\\s+`([0-9a-f ]+)` →\\s+`([0-9a-f ]+)`")
        .matcher(doc);
    assertTrue(m.find(), "the version-1 HELLO in docs/protocol.md");
    DocTables.Row hello = DocTables.table(doc, "## Examples").get(0);
    byte[] unsupported = new WireWriter().u32(6 + 8 + 2 + 3).u32(1).u8(1).u8(14).i64(0).str("v 2")
        .toBytes();
    List<List<ScriptedServer.Step>> sessions = List.of(
        List.of(new ScriptedServer.Step("HELLO v2", hello.hex().get(0), List.of(unsupported), true)),
        List.of(ScriptedServer.Step.of("HELLO v1", DocTables.parse(m.group(1)),
            DocTables.parse(m.group(2)))));
    try (ScriptedServer srv = new ScriptedServer(sessions);
         RelgraphClient c = RelgraphClient.connect(ClientOptions.to(srv.address())
             .withToken("secret").withPoolSize(1))) {
      assertEquals(new Hello(1, 1 << 20, "relgraphd", ""), c.hello());
      assertEquals(List.of(), srv.mismatches);
    }
  }

  @Test
  void streamExample() throws Exception {
    String doc = DocTables.doc();
    DocTables.Row hello = DocTables.table(doc, "## Examples").get(0);
    List<DocTables.Row> rows = DocTables.table(doc, "## Stream example");
    assertEquals(5, rows.size());
    byte[] sub = rows.get(0).hex().get(0);
    // Session 1: a Subscription from LSN 1 sends the doc's SUBSCRIBE and decodes its EVENTS.
    // Session 2: a second SUBSCRIBE on one connection is refused with the doc's error.
    List<List<ScriptedServer.Step>> sessions = List.of(
        List.of(ScriptedServer.Step.of("HELLO", hello.hex().get(0), hello.hex().get(1)),
            ScriptedServer.Step.of("SUBSCRIBE", sub, rows.get(1).hex().get(0),
                rows.get(2).hex().get(0))),
        List.of(ScriptedServer.Step.of("HELLO", hello.hex().get(0), hello.hex().get(1)),
            ScriptedServer.Step.of("SUBSCRIBE", sub, rows.get(1).hex().get(0)),
            ScriptedServer.Step.of("SUBSCRIBE again", rows.get(3).hex().get(0),
                rows.get(4).hex().get(0))));
    try (ScriptedServer srv = new ScriptedServer(sessions);
         RelgraphClient c = RelgraphClient.create(ClientOptions.to(srv.address()).withToken("secret"))) {
      try (Subscription s = c.subscribe(SubscribeOptions.fromLsn(1))) {
        assertEquals(new SubscribeReply(1, 3), s.reply());
        assertEquals(new Event(1, EventKind.FOLLOW, T0, 1, 2, false, 0, 0), s.next(Duration.ofSeconds(5)));
        assertEquals(new Event(2, EventKind.FOLLOW, T0 + 1000, 2, 1, true, 0, 0), s.next(Duration.ofSeconds(5)));
        assertEquals(new Event(3, EventKind.PUBLISH, T0 + 5000, 2, 500, false, 3, 0), s.next(Duration.ofSeconds(5)));
        assertEquals(4, s.nextLsn());
      }
      try (Connection conn = Connection.open(ClientOptions.parse(srv.address()), "secret", 5000)) {
        PushQueue<Events> q = new PushQueue<>(Codec.EVENTS);
        java.util.concurrent.CompletableFuture<SubscribeReply> f = conn.enqueue(Opcode.SUBSCRIBE,
            Codec.subscribe(SubscribeOptions.fromLsn(1)), Codec.SUBSCRIBE, 0, q);
        conn.flush();
        SubscribeReply r = Calls.join(f);
        assertEquals(new SubscribeReply(1, 3), r);
        RelgraphException e = assertThrows(RelgraphException.class, () -> Calls.join(conn.send(
            Opcode.SUBSCRIBE, Codec.subscribe(SubscribeOptions.fromNow()), Codec.SUBSCRIBE, 0)));
        assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
        assertTrue(e.serverMessage().startsWith("this connection already carries the pushed frames"));
      }
      assertEquals(List.of(), srv.mismatches);
    }
  }

  @Test
  void decoderRejectsTrailingAndMissingBytes() {
    byte[] body = new WireWriter().bool(true).u8(3).i64(T0).u8(9).toBytes();
    WireReader r = new WireReader(body, Opcode.FOLLOW);
    assertEquals(new FollowResult(true, Relation.of(3), T0), Codec.FOLLOW.decode(r));
    assertEquals(ErrorCode.PROTOCOL_ERROR, assertThrows(RelgraphException.class, r::end).code());
    WireReader shortBody = new WireReader(new byte[] {1, 3}, Opcode.FOLLOW);
    assertThrows(RelgraphException.class, () -> Codec.FOLLOW.decode(shortBody));
    assertNull(Opcode.of(0x99));
  }
}
