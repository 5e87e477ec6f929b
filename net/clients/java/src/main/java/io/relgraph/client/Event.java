package io.relgraph.client;

/** One change of the stream (docs/protocol.md "The change stream"; 43 bytes on the wire). Fields a kind does not use are 0. */
public record Event(long lsn, int kind, long ts, long a, long b, boolean friends, int detail, long evicted) {}
