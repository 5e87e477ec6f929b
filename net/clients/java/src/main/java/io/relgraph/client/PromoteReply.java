package io.relgraph.client;

/** PROMOTE's reply. */
public record PromoteReply(long epoch, long epochId, long firstLsn) {}
