package io.relgraph.client;

/** A position in a user page, newest first: the entries strictly older than (ts, user) follow it. */
public record Cursor(long ts, long user) {}
