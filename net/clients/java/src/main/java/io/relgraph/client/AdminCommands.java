package io.relgraph.client;

import java.util.concurrent.CompletableFuture;

/** PING, INFO, SNAPSHOT, SLOWLOG and the replication commands a client sends (docs/protocol.md). */
public interface AdminCommands extends Calls {
  default CompletableFuture<Void> pingAsync() {
    return call(Opcode.PING, Codec.empty(), Codec.EMPTY);
  }

  default void ping() {
    await(pingAsync());
  }

  default CompletableFuture<Info> infoAsync() {
    return call(Opcode.INFO, Codec.empty(), Codec.INFO);
  }

  default Info info() {
    return await(infoAsync());
  }

  /** Writes a snapshot now (a server with a data directory). */
  default CompletableFuture<SnapshotInfo> snapshotAsync() {
    return call(Opcode.SNAPSHOT, Codec.empty(), Codec.SNAPSHOT);
  }

  default SnapshotInfo snapshot() {
    return await(snapshotAsync());
  }

  default CompletableFuture<Replication> replicationAsync() {
    return call(Opcode.REPLICATION, Codec.empty(), Codec.REPLICATION);
  }

  default Replication replication() {
    return await(replicationAsync());
  }

  /** The node's role, epoch and applied and durable LSN (reading one's own writes). */
  default CompletableFuture<Position> positionAsync() {
    return call(Opcode.POSITION, Codec.empty(), Codec.POSITION);
  }

  default Position position() {
    return await(positionAsync());
  }

  /**
   * The shard map a cluster's shard holds, in its versioned text form (docs/cluster.md,
   * "Clients without NATS"); unsupported outside a cluster.
   */
  default CompletableFuture<String> shardMapAsync() {
    return call(Opcode.SHARD_MAP, Codec.empty(), Codec.SHARD_MAP);
  }

  default String shardMap() {
    return await(shardMapAsync());
  }

  /**
   * The server's slow-command log: its newest {@code count} entries (0: all), newest first;
   * with {@code reset} the server empties it after the read. About the node asked.
   */
  default CompletableFuture<Slowlog> slowlogAsync(int count, boolean reset) {
    return call(Opcode.SLOWLOG, Codec.slowlog(count, reset), Codec.SLOWLOG);
  }

  default Slowlog slowlog(int count, boolean reset) {
    return await(slowlogAsync(count, reset));
  }

  /** Never retried: each PROMOTE starts a new epoch. */
  default CompletableFuture<PromoteReply> promoteAsync(boolean force) {
    return call(Opcode.PROMOTE, Codec.promote(force), Codec.PROMOTE);
  }

  default PromoteReply promote(boolean force) {
    return await(promoteAsync(force));
  }

  /** Makes the node follow {@code primary} (HOST:PORT); resync copies its snapshot first. */
  default CompletableFuture<Void> replicaOfAsync(String primary, boolean resync) {
    return call(Opcode.REPLICA_OF, Codec.replicaOf(primary, resync), Codec.EMPTY);
  }

  default void replicaOf(String primary, boolean resync) {
    await(replicaOfAsync(primary, resync));
  }

  /** A replica's position report (normally sent on its REPLICATE connection: ReplicationStream). */
  default CompletableFuture<Void> replicaAckAsync(String name, long appliedLsn, long durableLsn) {
    return call(Opcode.REPLICA_ACK, Codec.replicaAck(name, appliedLsn, durableLsn), Codec.EMPTY);
  }

  default void replicaAck(String name, long appliedLsn, long durableLsn) {
    await(replicaAckAsync(name, appliedLsn, durableLsn));
  }
}
