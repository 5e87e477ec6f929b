package io.relgraph.client;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/** The follow graph's commands (docs/protocol.md 0x10-0x19). Ids are u64, times ms. */
public interface GraphCommands extends Calls {
  /** FOLLOW at the server's clock. */
  default CompletableFuture<FollowResult> followAsync(long follower, long followee) {
    return call(Opcode.FOLLOW, Codec.follow(follower, followee, null), Codec.FOLLOW);
  }

  default FollowResult follow(long follower, long followee) {
    return await(followAsync(follower, followee));
  }

  /** FOLLOW at a given time (imports, migrations). */
  default CompletableFuture<FollowResult> followAtAsync(long follower, long followee, long tsMs) {
    return call(Opcode.FOLLOW, Codec.follow(follower, followee, tsMs), Codec.FOLLOW);
  }

  default FollowResult followAt(long follower, long followee, long tsMs) {
    return await(followAtAsync(follower, followee, tsMs));
  }

  /** UNFOLLOW: whether an edge went. */
  default CompletableFuture<Boolean> unfollowAsync(long follower, long followee) {
    return call(Opcode.UNFOLLOW, Codec.pair(follower, followee), Codec.BOOL);
  }

  default boolean unfollow(long follower, long followee) {
    return await(unfollowAsync(follower, followee));
  }

  default CompletableFuture<Relation> relationAsync(long a, long b) {
    return call(Opcode.RELATION, Codec.pair(a, b), Codec.RELATION);
  }

  default Relation relation(long a, long b) {
    return await(relationAsync(a, b));
  }

  /** relation(a, other) for each of 1..1000 others, in their order. */
  default CompletableFuture<List<Relation>> relationsAsync(long a, List<Long> others) {
    return call(Opcode.RELATIONS, Codec.relations(a, others), Codec.RELATIONS);
  }

  default List<Relation> relations(long a, List<Long> others) {
    return await(relationsAsync(a, others));
  }

  default CompletableFuture<Page> followingAsync(PageQuery q) {
    return call(Opcode.FOLLOWING, Codec.pageQuery(q), Codec.PAGE);
  }

  default Page following(PageQuery q) {
    return await(followingAsync(q));
  }

  default CompletableFuture<Page> fansAsync(PageQuery q) {
    return call(Opcode.FANS, Codec.pageQuery(q), Codec.PAGE);
  }

  default Page fans(PageQuery q) {
    return await(fansAsync(q));
  }

  default CompletableFuture<Page> friendsAsync(PageQuery q) {
    return call(Opcode.FRIENDS, Codec.pageQuery(q), Codec.PAGE);
  }

  default Page friends(PageQuery q) {
    return await(friendsAsync(q));
  }

  /** Every entry of FOLLOWING from q on, page by page (q.limit a page), following the cursor. */
  default PageIterator<PageEntry> followingAll(PageQuery q) {
    return PageIterator.users(q, this::following);
  }

  default PageIterator<PageEntry> fansAll(PageQuery q) {
    return PageIterator.users(q, this::fans);
  }

  default PageIterator<PageEntry> friendsAll(PageQuery q) {
    return PageIterator.users(q, this::friends);
  }

  default CompletableFuture<Counts> countsAsync(long user) {
    return call(Opcode.COUNTS, Codec.one(user), Codec.COUNTS);
  }

  default Counts counts(long user) {
    return await(countsAsync(user));
  }

  /** Users the viewer follows who follow target, newest first; limit 0..1000 (0: the total only). */
  default CompletableFuture<KnownFollowers> knownFollowersAsync(long viewer, long target, int limit) {
    return call(Opcode.KNOWN_FOLLOWERS, Codec.knownFollowers(viewer, target, limit),
        Codec.KNOWN_FOLLOWERS);
  }

  default KnownFollowers knownFollowers(long viewer, long target, int limit) {
    return await(knownFollowersAsync(viewer, target, limit));
  }

  /** REMOVE_USER: every edge of the user, both ways; the number removed. */
  default CompletableFuture<Long> removeUserAsync(long user) {
    return call(Opcode.REMOVE_USER, Codec.one(user), Codec.U64);
  }

  default long removeUser(long user) {
    return await(removeUserAsync(user));
  }
}
