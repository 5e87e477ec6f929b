package io.relgraph.client;

import java.util.concurrent.CompletableFuture;

/** Blocks, private accounts and follow requests (docs/protocol.md 0x40-0x48; docs/access.md). */
public interface AccessCommands extends Calls {
  default CompletableFuture<BlockResult> blockAsync(long user, long blocked) {
    return call(Opcode.BLOCK, Codec.pair(user, blocked), Codec.BLOCK);
  }

  default BlockResult block(long user, long blocked) {
    return await(blockAsync(user, blocked));
  }

  default CompletableFuture<Boolean> unblockAsync(long user, long other) {
    return call(Opcode.UNBLOCK, Codec.pair(user, other), Codec.BOOL);
  }

  default boolean unblock(long user, long other) {
    return await(unblockAsync(user, other));
  }

  /** Whom q.user blocks (a counted page). */
  default CompletableFuture<Page> blocksAsync(PageQuery q) {
    return call(Opcode.BLOCKS, Codec.pageQuery(q), Codec.COUNTED_PAGE);
  }

  default Page blocks(PageQuery q) {
    return await(blocksAsync(q));
  }

  default PageIterator<PageEntry> blocksAll(PageQuery q) {
    return PageIterator.users(q, this::blocks);
  }

  default CompletableFuture<SetPrivateResult> setPrivateAsync(long user, boolean on) {
    return call(Opcode.SET_PRIVATE, Codec.userFlag(user, on), Codec.SET_PRIVATE);
  }

  default SetPrivateResult setPrivate(long user, boolean on) {
    return await(setPrivateAsync(user, on));
  }

  default CompletableFuture<Boolean> isPrivateAsync(long user) {
    return call(Opcode.IS_PRIVATE, Codec.one(user), Codec.BOOL);
  }

  default boolean isPrivate(long user) {
    return await(isPrivateAsync(user));
  }

  /** Who asks to follow q.user (a counted page). */
  default CompletableFuture<Page> requestsAsync(PageQuery q) {
    return call(Opcode.REQUESTS, Codec.pageQuery(q), Codec.COUNTED_PAGE);
  }

  default Page requests(PageQuery q) {
    return await(requestsAsync(q));
  }

  default PageIterator<PageEntry> requestsAll(PageQuery q) {
    return PageIterator.users(q, this::requests);
  }

  /** user accepts other's request: the new edge other -> user. */
  default CompletableFuture<FollowResult> approveAsync(long user, long other) {
    return call(Opcode.APPROVE, Codec.pair(user, other), Codec.FOLLOW);
  }

  default FollowResult approve(long user, long other) {
    return await(approveAsync(user, other));
  }

  default CompletableFuture<Boolean> rejectAsync(long user, long other) {
    return call(Opcode.REJECT, Codec.pair(user, other), Codec.BOOL);
  }

  default boolean reject(long user, long other) {
    return await(rejectAsync(user, other));
  }

  /** user withdraws its request to other. */
  default CompletableFuture<Boolean> withdrawAsync(long user, long other) {
    return call(Opcode.WITHDRAW, Codec.pair(user, other), Codec.BOOL);
  }

  default boolean withdraw(long user, long other) {
    return await(withdrawAsync(user, other));
  }
}
