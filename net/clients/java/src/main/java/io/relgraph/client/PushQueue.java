package io.relgraph.client;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The frames one stream pushes (EVENTS, SNAPSHOT_DATA, RECORDS), decoded on the connection's
 * reader thread and queued for the stream's owner. The queue is bounded: when the owner reads
 * slowly the reader thread waits, the socket is not read, and the server's flow control holds
 * the rest (docs/protocol.md "Flow control"). Ends with a {@link Dropped} item.
 */
final class PushQueue<T> implements Connection.PushHandler {
  /** The connection ended: nothing follows. */
  record Dropped(RelgraphException cause) {}

  private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>(64);
  private final Codec.Decoder<T> decoder;
  private volatile boolean abandoned;

  PushQueue(Codec.Decoder<T> decoder) {
    this.decoder = decoder;
  }

  @Override
  public void onPush(Opcode op, int status, WireReader body) {
    Object item;
    if (status != 0) {
      item = Codec.error(status, body, op);
    } else {
      try {
        T v = decoder.decode(body);
        body.end();
        item = v;
      } catch (RelgraphException e) {
        item = e;
      }
    }
    put(item);
  }

  @Override
  public void onClose(RelgraphException cause) {
    put(new Dropped(cause));
  }

  private void put(Object item) {
    try {
      while (!abandoned && !queue.offer(item, 100, TimeUnit.MILLISECONDS)) {
        // the owner is slow: wait (flow control), unless it has gone
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The next item (a T, a RelgraphException ending the stream, or Dropped), or null on timeout. */
  Object poll(long timeoutNanos) throws InterruptedException {
    return timeoutNanos < 0 ? queue.take() : queue.poll(timeoutNanos, TimeUnit.NANOSECONDS);
  }

  /**
   * The owner is done with this stream: the reader thread stops waiting for room, what is
   * queued is dropped, and a thread waiting in {@link #poll} wakes to a Dropped item.
   */
  void abandon() {
    abandoned = true;
    queue.clear();
    queue.offer(new Dropped(new ConnectionException("stream closed by its owner", false, null, null)));
  }
}
