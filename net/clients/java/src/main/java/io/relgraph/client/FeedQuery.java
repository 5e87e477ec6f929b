package io.relgraph.client;

/**
 * A page of TIMELINE (user = the reader) or USER_POSTS (user = the author): {@code feed_query :=
 * user limit(1..100) after:opt<post_cursor> kinds:u64} ({@code kinds}: bit k selects post kind k,
 * 0 every kind). Immutable.
 */
public record FeedQuery(long user, int limit, PostCursor after, long kinds) {
  public static FeedQuery of(long user, int limit) {
    return new FeedQuery(user, limit, null, 0);
  }

  public FeedQuery withAfter(PostCursor after) {
    return new FeedQuery(user, limit, after, kinds);
  }

  public FeedQuery withKinds(long kinds) {
    return new FeedQuery(user, limit, after, kinds);
  }
}
