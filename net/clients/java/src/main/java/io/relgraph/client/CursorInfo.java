package io.relgraph.client;

/** One named cursor of CURSORS: its acknowledged LSN and when, and whether the WAL no longer holds its resume LSN. */
public record CursorInfo(String name, long ackedLsn, long ackedMs, boolean expired) {}
