package io.relgraph.client;

import java.util.List;

/** SLOWLOG's reply: the threshold in force (-1: off), the log's length, entries newest first. */
public record Slowlog(long thresholdUs, long maxLen, List<SlowlogEntry> entries) {}
