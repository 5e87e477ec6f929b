package io.relgraph.client;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A client of one relgraphd: a pool of multiplexed connections safe to share across threads,
 * every command of docs/protocol.md as a typed {@code xxxAsync} call (a CompletableFuture) and a
 * blocking {@code xxx} wrapper, page iterators, the change stream ({@link #subscribe}), snapshot
 * transfer and replication streams.
 *
 * <p>Retries: a call is sent again (at most {@code maxRetries} times, with backoff, within
 * {@code callTimeout}) when it was never written, or when its connection broke after it was
 * written and the command is retry-safe ({@link Opcode#retrySafe()}). A write that a replica
 * refuses with read_only goes to the primary the error names (retry-safe writes only), and the
 * client sends every later call there too. Server errors are returned, not retried.
 *
 * <p>Thread-safety: every method may be called from any thread. Futures complete on a
 * connection's reader thread: a callback that blocks stalls that connection (use the
 * {@code ...Async(fn, executor)} forms of CompletableFuture for slow work).
 */
public final class RelgraphClient implements GraphCommands, FeedCommands, AccessCommands,
    CursorCommands, AdminCommands, AutoCloseable {
  private static final ScheduledExecutorService SWEEPER = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "relgraph-timeouts");
    t.setDaemon(true);
    return t;
  });

  private final ClientOptions options;
  private final Tls tls; // null: plain TCP; its context is built at the first connect
  private final ConnectionPool pool;
  private final ExecutorService retries = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "relgraph-retry");
    t.setDaemon(true);
    return t;
  });
  private final ScheduledFuture<?> sweep;
  private volatile boolean closed;

  private RelgraphClient(ClientOptions options) {
    this.options = options;
    this.tls = Tls.of(options.tls());
    this.pool = new ConnectionPool(options, tls);
    this.sweep = SWEEPER.scheduleWithFixedDelay(() -> pool.sweep(System.nanoTime()), 20, 20,
        TimeUnit.MILLISECONDS);
  }

  /** A client that connects on first use. */
  public static RelgraphClient create(ClientOptions options) {
    return new RelgraphClient(options);
  }

  /** A client with one connection made (HELLO answered) before it returns; throws when that fails. */
  public static RelgraphClient connect(ClientOptions options) {
    RelgraphClient c = new RelgraphClient(options);
    try {
      c.pool.get();
    } catch (RuntimeException e) {
      c.close();
      throw e;
    }
    return c;
  }

  public static RelgraphClient connect(String address) {
    return connect(ClientOptions.to(address));
  }

  /** Where the client sends calls now (a read_only redirect moves it to the primary). */
  public InetSocketAddress address() {
    return pool.address();
  }

  /** The HELLO reply of a pooled connection (connecting one if needed). */
  public Hello hello() {
    return pool.get().hello();
  }

  public ClientOptions options() {
    return options;
  }

  /** A connection of its own (not pooled), for a stream: to {@link #address()}, with TLS if set. */
  Connection openConnection() {
    return Connection.open(address(), options.token(), (int) options.connectTimeout().toMillis(),
        tls);
  }

  @Override
  public <T> CompletableFuture<T> call(Opcode op, byte[] body, Codec.Decoder<T> decoder) {
    CompletableFuture<T> result = new CompletableFuture<>();
    attempt(op, body, decoder, result, 0, System.nanoTime() + options.callTimeout().toNanos());
    return result;
  }

  private <T> void attempt(Opcode op, byte[] body, Codec.Decoder<T> decoder,
      CompletableFuture<T> result, int n, long deadline) {
    Connection c;
    try {
      c = pool.get();
    } catch (RelgraphException e) {
      retryOrFail(op, body, decoder, result, n, deadline, e);
      return;
    }
    c.send(op, body, decoder, deadline).whenComplete((v, err) -> {
      if (err == null) {
        result.complete(v);
      } else {
        retryOrFail(op, body, decoder, result, n, deadline, unwrap(err));
      }
    });
  }

  private static RelgraphException unwrap(Throwable t) {
    if (t instanceof CompletionException && t.getCause() != null) t = t.getCause();
    if (t instanceof RelgraphException) return (RelgraphException) t;
    return new RelgraphException(ErrorCode.INTERNAL.code, 0, String.valueOf(t), null, t);
  }

  private <T> void retryOrFail(Opcode op, byte[] body, Codec.Decoder<T> decoder,
      CompletableFuture<T> result, int n, long deadline, RelgraphException e) {
    long pause;
    if (e instanceof ConnectionException ce) {
      if (ce.sent() && !op.retrySafe()) {
        result.completeExceptionally(ce.withOp(op, true));
        return;
      }
      pause = options.backoffNanos(n + 1);
    } else if (e.code() == ErrorCode.READ_ONLY && options.redirect() && op.retrySafe()
        && !op.readsOnly()) {
      String primary = e.serverMessage();
      if (primary.isEmpty()) {
        pause = options.backoffNanos(n + 1); // a group electing its primary: ask again
      } else {
        try {
          pool.retarget(ClientOptions.parse(primary));
        } catch (IllegalArgumentException bad) {
          result.completeExceptionally(e);
          return;
        }
        pause = 0;
      }
    } else {
      result.completeExceptionally(e);
      return;
    }
    if (closed || n >= options.maxRetries() || System.nanoTime() + pause - deadline > 0) {
      result.completeExceptionally(e instanceof ConnectionException ce ? ce.withOp(op, ce.sent()) : e);
      return;
    }
    Runnable again = () -> {
      try {
        retries.execute(() -> attempt(op, body, decoder, result, n + 1, deadline));
      } catch (RejectedExecutionException closing) {
        result.completeExceptionally(e);
      }
    };
    if (pause == 0) {
      again.run();
    } else {
      CompletableFuture.delayedExecutor(pause, TimeUnit.NANOSECONDS).execute(again);
    }
  }

  /**
   * A batch of requests on one pooled connection, written together by {@link Pipeline#flush()}:
   * the fastest way to send many requests from one thread.
   */
  public Pipeline pipeline() {
    return new Pipeline(this, pool.get(), options.callTimeout().toNanos());
  }

  /** Starts the change stream on a connection of its own; throws when SUBSCRIBE is refused. */
  public Subscription subscribe(SubscribeOptions o) {
    return new Subscription(this, options, o);
  }

  /**
   * FETCH_SNAPSHOT on a connection of its own: writes the server's newest snapshot file to out
   * (save it as snapshot-&lt;lsn, 20 digits&gt;.rgs) and returns its LSN and size.
   */
  public FetchSnapshotReply fetchSnapshot(OutputStream out) throws IOException {
    try (Connection c = openConnection()) {
      PushQueue<byte[]> q = new PushQueue<>(WireReader::rest);
      FetchSnapshotReply r = awaitStart(c, c.enqueue(Opcode.FETCH_SNAPSHOT, Codec.empty(),
          Codec.FETCH_SNAPSHOT, 0, q), Opcode.FETCH_SNAPSHOT);
      long have = 0;
      while (have < r.fileBytes()) {
        Object item;
        try {
          item = q.poll(options.callTimeout().toNanos());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new ConnectionException("interrupted", true, Opcode.FETCH_SNAPSHOT, e);
        }
        if (item == null) {
          throw new RelgraphException(ErrorCode.TIMEOUT.code, 0, "no SNAPSHOT_DATA in time",
              Opcode.FETCH_SNAPSHOT);
        }
        if (item instanceof RelgraphException e) throw e;
        if (item instanceof PushQueue.Dropped d) throw d.cause();
        byte[] frame = (byte[]) item;
        WireReader w = new WireReader(frame, Opcode.SNAPSHOT_DATA);
        long offset = w.u64();
        if (offset != have) {
          throw new RelgraphException(ErrorCode.PROTOCOL_ERROR.code, 0,
              "SNAPSHOT_DATA at offset " + offset + ", expected " + have, Opcode.SNAPSHOT_DATA);
        }
        byte[] data = w.rest();
        out.write(data);
        have += data.length;
      }
      return r;
    }
  }

  /** REPLICATE on a connection of its own: the RECORDS frames from request.fromLsn on. */
  public ReplicationStream replicate(ReplicateRequest request) {
    Connection c = openConnection();
    PushQueue<Records> q = new PushQueue<>(Codec.RECORDS);
    try {
      ReplicateReply r = awaitStart(c, c.enqueue(Opcode.REPLICATE, Codec.replicate(request),
          Codec.REPLICATE, 0, q), Opcode.REPLICATE);
      return new ReplicationStream(c, q, r, request);
    } catch (RuntimeException e) {
      c.close();
      throw e;
    }
  }

  private <T> T awaitStart(Connection c, CompletableFuture<T> f, Opcode op) {
    c.flush();
    try {
      return f.get(options.callTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new RelgraphException(ErrorCode.TIMEOUT.code, 0, "no reply in time", op, e);
    } catch (ExecutionException e) {
      throw unwrap(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ConnectionException("interrupted", true, op, e);
    }
  }

  @Override
  public void close() {
    closed = true;
    sweep.cancel(false);
    pool.close();
    retries.shutdown();
  }
}
