package io.relgraph.client;

/**
 * Which user a request is about, read from its body, as the RouteBy column of
 * net/protocol/command_table.h declares it (docs/cluster.md, "Placement"): a cluster sends the
 * request to that user's shard. Every routed request's body starts with that user (the follower
 * of a follow, the {@code a} of a relation, a page's owner, an author, a reader); a page also
 * reads its viewer (the trailing {@code viewer:opt<u64>} of page_query) and KNOWN_FOLLOWERS its
 * target, whose shard must be the same. Pure functions; thread-safe.
 */
final class Routing {
  private Routing() {}

  /** Whether a cluster's shard runs {@code op} for the users of its buckets (the table's rows). */
  static boolean routed(Opcode op) {
    switch (op) {
      case FOLLOW: case UNFOLLOW: case RELATION: case RELATIONS: case FOLLOWING: case FANS:
      case FRIENDS: case COUNTS: case KNOWN_FOLLOWERS: case REMOVE_USER:
      case PUBLISH: case DELETE_POST: case TIMELINE: case USER_POSTS: case MUTE: case UNMUTE:
      case HIDE: case UNHIDE: case MUTES: case HIDES:
      case BLOCK: case UNBLOCK: case BLOCKS: case SET_PRIVATE: case IS_PRIVATE: case REQUESTS:
      case APPROVE: case REJECT: case WITHDRAW:
        return true;
      default:
        return false;
    }
  }

  /** Whether {@code op}'s body is a page_query. */
  static boolean pageQuery(Opcode op) {
    return op == Opcode.FOLLOWING || op == Opcode.FANS || op == Opcode.FRIENDS
        || op == Opcode.BLOCKS || op == Opcode.REQUESTS;
  }

  /** The user a routed request is about. REQUIRES: routed(op), a well-formed body. */
  static long user(byte[] body) {
    return new WireReader(body, null).u64();
  }

  /** The second user whose state the answer reads (a page's viewer, KNOWN_FOLLOWERS' target); 0: none. */
  static long viewer(Opcode op, byte[] body) {
    WireReader r = new WireReader(body, op);
    if (op == Opcode.KNOWN_FOLLOWERS) {
      r.u64();
      return r.u64();
    }
    if (!pageQuery(op)) return 0;
    r.u64(); // user
    r.u16(); // limit
    r.u32(); // offset
    if (r.present()) {
      r.i64();
      r.u64();
    }
    return r.present() ? r.u64() : 0;
  }
}
