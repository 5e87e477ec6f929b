package io.relgraph.client;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The one primitive every typed command is built on: send a request body, decode its reply.
 * {@link RelgraphClient} sends at once (pooled, retried); {@link Pipeline} holds requests until
 * it is flushed. The command interfaces add a typed {@code xxxAsync} call and a blocking
 * {@code xxx} wrapper for each command of docs/protocol.md on top of it.
 */
public interface Calls {
  /** Sends one request; the future completes with the decoded reply or a RelgraphException. */
  <T> CompletableFuture<T> call(Opcode op, byte[] body, Codec.Decoder<T> decoder);

  /** Waits for a call's reply: its value, or its RelgraphException thrown. */
  default <T> T await(CompletableFuture<T> f) {
    return join(f);
  }

  /** The value of a completed-or-not future, its RelgraphException thrown as is. */
  static <T> T join(CompletableFuture<T> f) {
    try {
      return f.join();
    } catch (CompletionException | CancellationException e) {
      Throwable c = e.getCause();
      if (c instanceof RelgraphException) {
        RelgraphException r = (RelgraphException) c;
        r.addSuppressed(new Exception("awaited here"));
        throw r;
      }
      if (c instanceof RuntimeException) throw (RuntimeException) c;
      throw e;
    }
  }
}
