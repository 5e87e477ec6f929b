package io.relgraph.client;

/** SUBSCRIBE's reply: where the stream starts and the newest change logged when it started. */
public record SubscribeReply(long firstLsn, long newestLsn) {}
