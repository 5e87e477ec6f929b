package io.relgraph.client;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The change stream on a connection of its own (docs/protocol.md "The change stream").
 * {@link #next} hands out events in LSN order. When the connection drops (or the server
 * restarts), the events already read are handed out first, then the subscription is made again
 * from the {@code next_lsn} of the last EVENTS frame handed out, with backoff: every event once.
 * {@code lsn_expired}, a bad argument or a refused token end it: {@link #next} throws them.
 *
 * <p>Thread-safety: {@link #next} belongs to one thread at a time; {@link #ack}, {@link #nextLsn}
 * and {@link #close} may be called from any.
 */
public final class Subscription implements AutoCloseable {
  private final RelgraphClient client;
  private final SubscribeOptions options;
  private final ClientOptions clientOptions;
  private volatile long resumeLsn; // where a new SUBSCRIBE starts: the last frame's next_lsn
  private volatile boolean closed;
  private Connection conn; // owned by the thread in next()
  private PushQueue<Events> frames;
  private SubscribeReply reply;
  private List<Event> current = List.of();
  private int at;
  private RelgraphException ended;
  private long resubscribes;

  Subscription(RelgraphClient client, ClientOptions clientOptions, SubscribeOptions options) {
    this.client = client;
    this.options = options;
    this.clientOptions = clientOptions;
    subscribe(options);
  }

  /** The first SUBSCRIBE's reply: where the stream started and the newest LSN then. */
  public SubscribeReply reply() {
    return reply;
  }

  /** The LSN the stream goes on from after the events handed out so far. */
  public long nextLsn() {
    return resumeLsn;
  }

  /** The connection carrying the stream now (tests drop it). */
  Connection connection() {
    return conn;
  }

  /** How many times the subscription was made again after a dropped connection. */
  public long resubscribes() {
    return resubscribes;
  }

  private void subscribe(SubscribeOptions o) {
    Connection c = client.openConnection();
    PushQueue<Events> q = new PushQueue<>(Codec.EVENTS);
    CompletableFuture<SubscribeReply> f = c.enqueue(Opcode.SUBSCRIBE, Codec.subscribe(o),
        Codec.SUBSCRIBE, 0, q);
    c.flush();
    SubscribeReply r;
    try {
      r = f.get(clientOptions.callTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      c.close();
      throw new ConnectionException(ErrorCode.TIMEOUT.code, "no SUBSCRIBE reply", true,
          Opcode.SUBSCRIBE, e);
    } catch (ExecutionException e) {
      c.close();
      throw (RelgraphException) e.getCause();
    } catch (InterruptedException e) {
      c.close();
      Thread.currentThread().interrupt();
      throw new ConnectionException("interrupted", true, Opcode.SUBSCRIBE, e);
    }
    if (reply == null) reply = r;
    resumeLsn = r.firstLsn();
    conn = c;
    frames = q;
    if (closed) c.close();
  }

  /** The next event, waiting as long as it takes. */
  public Event next() {
    return next(null);
  }

  /**
   * The next event, or null when none came within the timeout (null: wait forever). Throws the
   * error that ended the stream, or a ConnectionException once closed.
   */
  public Event next(Duration timeout) {
    long deadline = timeout == null ? 0 : System.nanoTime() + timeout.toNanos();
    while (true) {
      if (at < current.size()) return current.get(at++);
      if (ended != null) throw ended;
      if (closed) throw new ConnectionException("subscription closed", false, null, null);
      long wait = timeout == null ? -1 : Math.max(0, deadline - System.nanoTime());
      Object item;
      try {
        item = frames.poll(wait);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ConnectionException("interrupted", false, null, e);
      }
      if (item == null) return null; // timed out
      if (item instanceof Events ev) {
        current = ev.events();
        at = 0;
        resumeLsn = ev.nextLsn();
      } else if (item instanceof RelgraphException e) { // an error frame ends the stream
        ended = e;
        conn.close();
      } else if (item instanceof PushQueue.Dropped) {
        if (closed) continue;
        frames.abandon(); // anything the old connection still pushes is stale: resume re-reads it
        resume(deadline, timeout != null);
      }
    }
  }

  /** Subscribes again from resumeLsn, with backoff, until it works or fails for good. */
  private void resume(long deadline, boolean bounded) {
    SubscribeOptions again = new SubscribeOptions(SubscribeOptions.From.LSN, resumeLsn,
        options.kinds(), "");
    for (int n = 1; !closed; n++) {
      try {
        subscribe(again);
        resubscribes++;
        return;
      } catch (ConnectionException e) {
        // the server is not back yet: wait and dial again
      } catch (RelgraphException e) {
        if (e.code() != ErrorCode.UNAVAILABLE && e.code() != ErrorCode.RESOURCE_EXHAUSTED) {
          ended = e;
          return;
        }
      }
      long pause = clientOptions.backoffNanos(n);
      if (bounded && System.nanoTime() + pause - deadline > 0) {
        // keep the deadline: the next call to next() resumes again
        frames = droppedQueue();
        return;
      }
      try {
        TimeUnit.NANOSECONDS.sleep(pause);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        ended = new ConnectionException("interrupted", false, null, e);
        return;
      }
    }
  }

  private static PushQueue<Events> droppedQueue() {
    PushQueue<Events> q = new PushQueue<>(Codec.EVENTS);
    q.onClose(new ConnectionException("not resubscribed yet", false, null, null));
    return q;
  }

  /** Acknowledges lsn on the subscription's named cursor (SubscribeOptions.fromCursor's name). */
  public void ack(long lsn) {
    if (options.name().isEmpty()) {
      throw new IllegalStateException("this subscription names no cursor: use ack(name, lsn)");
    }
    client.ack(options.name(), lsn);
  }

  /** Acknowledges lsn on a named cursor (ACK through the client's pool). */
  public void ack(String name, long lsn) {
    client.ack(name, lsn);
  }

  /** Ends the stream; a thread waiting in {@link #next} wakes and gets a ConnectionException. */
  @Override
  public void close() {
    closed = true;
    PushQueue<Events> q = frames;
    if (q != null) q.abandon();
    Connection c = conn;
    if (c != null) c.close();
  }
}
