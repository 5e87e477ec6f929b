package io.relgraph.client;

/** One replica of REPLICATION's reply. */
public record ReplicaInfo(String name, long appliedLsn, long durableLsn, long ackAgeMs) {}
