package io.relgraph.client;
import java.util.List;
/** A page of users, newest first. total is the whole list's length for BLOCKS and REQUESTS (-1 for the others); next, the cursor of the following page, is null exactly when no more entries follow. */
public record Page(long total, List<PageEntry> entries, Cursor next) {}
