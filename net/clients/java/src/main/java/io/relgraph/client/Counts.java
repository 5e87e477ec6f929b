package io.relgraph.client;

/** COUNTS's reply. */
public record Counts(long following, long fans, long friends) {}
