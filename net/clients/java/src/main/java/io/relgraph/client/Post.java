package io.relgraph.client;

/** One post of a feed page. */
public record Post(long post, long author, long ts, int kind) {}
