package io.relgraph.client;

/** REPLICATE's request: every record from fromLsn on, for a replica of (epoch, epochId) that calls itself name. */
public record ReplicateRequest(long fromLsn, long epoch, long epochId, String name) {}
