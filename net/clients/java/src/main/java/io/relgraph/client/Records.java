package io.relgraph.client;
import java.util.List;
/** A RECORDS frame's body; no records: a heartbeat. The i-th record has LSN firstLsn + i. */
public record Records(long firstLsn, long newestLsn, long sentUs, List<WalRecord> records) {}
