package io.relgraph.client;

import java.time.Duration;

/**
 * A REPLICATE stream on a connection of its own (docs/protocol.md "Replication"): the RECORDS
 * frames in order, and {@link #ack} to send the REPLICA_ACK a replica owes for each frame on
 * that connection. It does not resume: a replica decides where to start again (relgraphd's own
 * follower does that). Thread-safety: {@link #next} belongs to one thread at a time.
 */
public final class ReplicationStream implements AutoCloseable {
  private final Connection conn;
  private final PushQueue<Records> frames;
  private final ReplicateReply reply;
  private final ReplicateRequest request;
  private RelgraphException ended;

  ReplicationStream(Connection conn, PushQueue<Records> frames, ReplicateReply reply,
      ReplicateRequest request) {
    this.conn = conn;
    this.frames = frames;
    this.reply = reply;
    this.request = request;
  }

  public ReplicateReply reply() {
    return reply;
  }

  /** The next RECORDS frame (no records: a heartbeat), or null when none came in time. */
  public Records next(Duration timeout) {
    if (ended != null) throw ended;
    Object item;
    try {
      item = frames.poll(timeout == null ? -1 : timeout.toNanos());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ConnectionException("interrupted", false, null, e);
    }
    if (item == null) return null;
    if (item instanceof Records r) return r;
    ended = item instanceof RelgraphException e ? e : ((PushQueue.Dropped) item).cause();
    conn.close();
    throw ended;
  }

  /** REPLICA_ACK on the replicating connection, under the name the REPLICATE gave. */
  public void ack(long appliedLsn, long durableLsn) {
    Calls.join(conn.send(Opcode.REPLICA_ACK,
        Codec.replicaAck(request.name(), appliedLsn, durableLsn), Codec.EMPTY, 0));
  }

  @Override
  public void close() {
    frames.abandon();
    conn.close();
  }
}
