package io.relgraph.client;

/**
 * POSITION's reply: where a node's history stands. A client reads its own writes from a
 * replica by asking the primary after a write and the replica before a read
 * (docs/replication.md, "Reading your own writes").
 *
 * @param role 0 primary, 1 replica
 * @param appliedLsn requests executed after POSITION on its connection see at least this LSN
 */
public record Position(int role, long epoch, long appliedLsn, long durableLsn) {}
