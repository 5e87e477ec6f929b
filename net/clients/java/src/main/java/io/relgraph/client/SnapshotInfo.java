package io.relgraph.client;

/** SNAPSHOT's reply: the LSN the snapshot covers, its edges, its file's size, when it was written (ms). */
public record SnapshotInfo(long lsn, long edges, long fileBytes, long createdMs) {}
