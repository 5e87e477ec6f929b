package io.relgraph.client;

/** BLOCK's reply: whether the block is new, its time, and what went (bit 0: user -> blocked, bit 1: blocked -> user, bit 2: a pending request). */
public record BlockResult(boolean created, long ts, int removed) {}
