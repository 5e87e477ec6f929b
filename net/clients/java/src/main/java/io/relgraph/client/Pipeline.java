package io.relgraph.client;

import java.util.concurrent.CompletableFuture;

/**
 * A batch of typed requests on one of the client's connections, written together by
 * {@link #flush()} (one system call for the lot), each with its own future. Every command of
 * {@link RelgraphClient} is here too; a blocking call flushes first. A request whose connection
 * broke is sent again through the client when that is safe (never written, or retry-safe), with
 * the client's retries; server errors complete its future alone.
 *
 * <p>Belongs to one thread at a time; the futures may be awaited anywhere.
 */
public final class Pipeline implements GraphCommands, FeedCommands, AccessCommands,
    CursorCommands, AdminCommands {
  private final RelgraphClient client;
  private final Connection conn;
  private final long timeoutNanos;

  Pipeline(RelgraphClient client, Connection conn, long timeoutNanos) {
    this.client = client;
    this.conn = conn;
    this.timeoutNanos = timeoutNanos;
  }

  @Override
  public <T> CompletableFuture<T> call(Opcode op, byte[] body, Codec.Decoder<T> decoder) {
    CompletableFuture<T> f = conn.enqueue(op, body, decoder, System.nanoTime() + timeoutNanos, null);
    CompletableFuture<T> out = new CompletableFuture<>();
    f.whenComplete((v, err) -> {
      if (err == null) {
        out.complete(v);
      } else if (err instanceof ConnectionException ce && (!ce.sent() || op.retrySafe())) {
        client.call(op, body, decoder).whenComplete((v2, err2) -> {
          if (err2 == null) out.complete(v2); else out.completeExceptionally(err2);
        });
      } else {
        out.completeExceptionally(err);
      }
    });
    return out;
  }

  /** Writes every request added since the last flush. */
  public void flush() {
    conn.flush();
  }

  @Override
  public <T> T await(CompletableFuture<T> f) {
    flush();
    return Calls.join(f);
  }
}
