package io.relgraph.client;

/** One WAL record as logged (docs/wal-format.md). */
public record WalRecord(int type, byte[] payload) {}
