package io.relgraph.client;

/**
 * A page of FOLLOWING, FANS, FRIENDS, BLOCKS or REQUESTS: {@code page_query := user limit(1..1000)
 * offset after:opt<cursor> viewer:opt<u64>}. With {@code after}, the entries strictly older than it
 * (offset ignored); with a viewer (nonzero), each entry's viewerRelation. Immutable; build with
 * {@link #of(long, int)} and the with-methods.
 */
public record PageQuery(long user, int limit, long offset, Cursor after, long viewer) {
  public static PageQuery of(long user, int limit) {
    return new PageQuery(user, limit, 0, null, 0);
  }

  public PageQuery withOffset(long offset) {
    return new PageQuery(user, limit, offset, after, viewer);
  }

  public PageQuery withAfter(Cursor after) {
    return new PageQuery(user, limit, offset, after, viewer);
  }

  /** 0: no viewer. */
  public PageQuery withViewer(long viewer) {
    return new PageQuery(user, limit, offset, after, viewer);
  }
}
