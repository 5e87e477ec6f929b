package io.relgraph.client;

/** The server's HELLO reply: the protocol version agreed (2, or 1 with an old server), the largest frame it takes (header included), its name and version (empty in version 1). */
public record Hello(int version, long maxFrame, String server, String serverVersion) {}
