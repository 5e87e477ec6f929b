package io.relgraph.client;

/**
 * One command the server's slow-command log kept (docs/protocol.md, "Slow-command log"): its
 * id, when it started (ms since the Unix epoch), how long it took (µs), the command's name, its
 * fields as text (at most 128 bytes) and the client's address.
 */
public record SlowlogEntry(
    long id, long startMs, long durationUs, String command, String args, String client) {}
