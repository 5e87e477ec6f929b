package io.relgraph.client;

/** The change stream's event kinds (docs/protocol.md "The change stream"); 10 and 11 are never events. */
public final class EventKind {
  public static final int FOLLOW = 1, UNFOLLOW = 2, REMOVE_USER = 3, PUBLISH = 4, DELETE_POST = 5,
      MUTE = 6, UNMUTE = 7, HIDE = 8, UNHIDE = 9, BLOCK = 12, UNBLOCK = 13, SET_PRIVATE = 14,
      REQUEST = 15, APPROVE = 16, REJECT = 17, WITHDRAW = 18;

  private EventKind() {}

  /** The SUBSCRIBE kinds mask selecting the given kinds. */
  public static long mask(int... kinds) {
    long m = 0;
    for (int k : kinds) m |= 1L << k;
    return m;
  }
}
