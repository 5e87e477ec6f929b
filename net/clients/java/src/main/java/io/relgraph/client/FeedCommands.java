package io.relgraph.client;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/** The feed's commands (docs/protocol.md 0x20-0x29; docs/feed.md). */
public interface FeedCommands extends Calls {
  /** PUBLISH at the server's clock; kind 0..63. */
  default CompletableFuture<PublishResult> publishAsync(long author, long post, int kind) {
    return call(Opcode.PUBLISH, Codec.publish(author, post, kind, null), Codec.PUBLISH);
  }

  default PublishResult publish(long author, long post, int kind) {
    return await(publishAsync(author, post, kind));
  }

  default CompletableFuture<PublishResult> publishAtAsync(long author, long post, int kind, long tsMs) {
    return call(Opcode.PUBLISH, Codec.publish(author, post, kind, tsMs), Codec.PUBLISH);
  }

  default PublishResult publishAt(long author, long post, int kind, long tsMs) {
    return await(publishAtAsync(author, post, kind, tsMs));
  }

  /** DELETE_POST; NOT_FOUND when the author holds no such post. */
  default CompletableFuture<Void> deletePostAsync(long author, long post) {
    return call(Opcode.DELETE_POST, Codec.pair(author, post), Codec.EMPTY);
  }

  default void deletePost(long author, long post) {
    await(deletePostAsync(author, post));
  }

  default CompletableFuture<FeedPage> timelineAsync(FeedQuery q) {
    return call(Opcode.TIMELINE, Codec.feedQuery(q), Codec.FEED_PAGE);
  }

  default FeedPage timeline(FeedQuery q) {
    return await(timelineAsync(q));
  }

  default CompletableFuture<FeedPage> userPostsAsync(FeedQuery q) {
    return call(Opcode.USER_POSTS, Codec.feedQuery(q), Codec.FEED_PAGE);
  }

  default FeedPage userPosts(FeedQuery q) {
    return await(userPostsAsync(q));
  }

  default PageIterator<Post> timelineAll(FeedQuery q) {
    return PageIterator.posts(q, this::timeline);
  }

  default PageIterator<Post> userPostsAll(FeedQuery q) {
    return PageIterator.posts(q, this::userPosts);
  }

  default CompletableFuture<Boolean> muteAsync(long user, long other) {
    return call(Opcode.MUTE, Codec.pair(user, other), Codec.BOOL);
  }

  default boolean mute(long user, long other) {
    return await(muteAsync(user, other));
  }

  default CompletableFuture<Boolean> unmuteAsync(long user, long other) {
    return call(Opcode.UNMUTE, Codec.pair(user, other), Codec.BOOL);
  }

  default boolean unmute(long user, long other) {
    return await(unmuteAsync(user, other));
  }

  default CompletableFuture<Boolean> hideAsync(long author, long from) {
    return call(Opcode.HIDE, Codec.pair(author, from), Codec.BOOL);
  }

  default boolean hide(long author, long from) {
    return await(hideAsync(author, from));
  }

  default CompletableFuture<Boolean> unhideAsync(long author, long from) {
    return call(Opcode.UNHIDE, Codec.pair(author, from), Codec.BOOL);
  }

  default boolean unhide(long author, long from) {
    return await(unhideAsync(author, from));
  }

  /** Whom the user mutes, in id order. */
  default CompletableFuture<List<Long>> mutesAsync(long user) {
    return call(Opcode.MUTES, Codec.one(user), Codec.IDS);
  }

  default List<Long> mutes(long user) {
    return await(mutesAsync(user));
  }

  default CompletableFuture<List<Long>> hidesAsync(long author) {
    return call(Opcode.HIDES, Codec.one(author), Codec.IDS);
  }

  default List<Long> hides(long author) {
    return await(hidesAsync(author));
  }
}
