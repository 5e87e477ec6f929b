package io.relgraph.client;

/** REPLICATE's reply. */
public record ReplicateReply(long epoch, long epochId, long newestLsn) {}
