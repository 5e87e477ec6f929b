package io.relgraph.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The change stream: resume across a dropped connection and a restart, named cursors, kinds. */
class StreamTest {
  static final Duration WAIT = Duration.ofSeconds(20);

  /** Reads events until lsn `last`, requiring them to be exactly want..last with no gap or repeat. */
  private static long readThrough(Subscription s, long want, long last) {
    while (want <= last) {
      Event e = s.next(WAIT);
      assertNotNull(e, "event " + want + " in time");
      assertEquals(want, e.lsn(), "events in LSN order, each once");
      want++;
    }
    return want;
  }

  @Test
  void resumesAfterADroppedConnectionAndARestart() throws Exception {
    try (TestServer srv = new TestServer();
         RelgraphClient c = RelgraphClient.connect(srv.options()
             .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200)))) {
      for (int k = 1; k <= 100; k++) c.follow(1, 100 + k);
      try (Subscription s = c.subscribe(SubscribeOptions.fromLsn(1))) {
        assertEquals(1, s.reply().firstLsn());
        long next = readThrough(s, 1, 40);
        // Drop the stream's connection mid-way: the events read are handed out, then it resumes.
        s.connection().close();
        for (int k = 101; k <= 150; k++) c.follow(1, 100 + k);
        next = readThrough(s, next, 150);
        assertEquals(1, s.resubscribes());
        // Restart the server (a clean stop keeps every acknowledged write) while events wait.
        for (int k = 151; k <= 170; k++) c.follow(2, 100 + k);
        next = readThrough(s, next, 160);
        srv.restart();
        for (int k = 171; k <= 200; k++) c.follow(3, 100 + k);
        next = readThrough(s, next, 200);
        assertTrue(s.resubscribes() >= 2);
        assertEquals(201, s.nextLsn());
        assertEquals(null, s.next(Duration.ofMillis(50)));
      }
    }
  }

  @Test
  void closeWakesAWaitingReader() throws Exception {
    try (TestServer srv = new TestServer(); RelgraphClient c = RelgraphClient.connect(srv.options())) {
      Subscription s = c.subscribe(SubscribeOptions.fromNow());
      java.util.concurrent.CompletableFuture<Event> waiting =
          java.util.concurrent.CompletableFuture.supplyAsync(s::next); // no event will come
      Thread.sleep(100); // let the reader block in next() (the test holds either way)
      s.close();
      java.util.concurrent.ExecutionException e = assertThrows(
          java.util.concurrent.ExecutionException.class,
          () -> waiting.get(20, java.util.concurrent.TimeUnit.SECONDS));
      assertTrue(e.getCause() instanceof ConnectionException, e.getCause().toString());
    }
  }

  @Test
  void namedCursorsAndKinds() throws Exception {
    try (TestServer srv = new TestServer(); RelgraphClient c = RelgraphClient.connect(srv.options())) {
      c.ack("indexer", 0); // pins the WAL from the start
      for (int k = 1; k <= 30; k++) c.follow(5, 10 + k); // LSNs 2..31 (the ACK took 1)
      c.publish(5, 777, 9); // 32
      try (Subscription s = c.subscribe(SubscribeOptions.fromCursor("indexer"))) {
        Event first = s.next(WAIT);
        assertEquals(new Event(2, EventKind.FOLLOW, first.ts(), 5, 11, false, 0, 0), first);
        readThrough(s, 3, 20);
        s.ack(20);
      }
      List<CursorInfo> cursors = c.cursors();
      assertEquals(1, cursors.size());
      assertEquals("indexer", cursors.get(0).name());
      assertEquals(20, cursors.get(0).ackedLsn());
      try (Subscription s = c.subscribe(SubscribeOptions.fromCursor("indexer"))) {
        assertEquals(21, s.next(WAIT).lsn());
      }
      try (Subscription s = c.subscribe(SubscribeOptions.fromLsn(1)
          .withKinds(EventKind.mask(EventKind.PUBLISH)))) {
        Event e = s.next(WAIT);
        assertEquals(EventKind.PUBLISH, e.kind());
        assertEquals(777, e.b());
        assertEquals(9, e.detail());
        assertTrue(s.nextLsn() > e.lsn());
      }
      c.deleteCursor("indexer");
      assertEquals(List.of(), c.cursors());
      RelgraphException e = assertThrows(RelgraphException.class,
          () -> c.subscribe(SubscribeOptions.fromCursor("indexer")));
      assertEquals(ErrorCode.NOT_FOUND, e.code());
      e = assertThrows(RelgraphException.class, () -> c.subscribe(SubscribeOptions.fromLsn(10_000)));
      assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
    }
  }
}
