package io.relgraph.client;

/** FETCH_SNAPSHOT's reply: the LSN the snapshot holds and its size. */
public record FetchSnapshotReply(long lsn, long fileBytes) {}
