package io.relgraph.client;

/** A position in a feed page: the posts strictly older than (ts, post) follow it. */
public record PostCursor(long ts, long post) {}
