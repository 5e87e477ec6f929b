package io.relgraph.client;

/**
 * A frame's command byte (docs/protocol.md "Commands"), with the two facts of
 * net/protocol/command_table.h a client acts on: {@link #retrySafe()} and {@link #readsOnly()}.
 */
public enum Opcode {
  NOTICE(0x00), HELLO(0x01), PING(0x02), INFO(0x03), SNAPSHOT(0x04),
  FOLLOW(0x10), UNFOLLOW(0x11), RELATION(0x12), RELATIONS(0x13), FOLLOWING(0x14), FANS(0x15),
  FRIENDS(0x16), COUNTS(0x17), KNOWN_FOLLOWERS(0x18), REMOVE_USER(0x19),
  PUBLISH(0x20), DELETE_POST(0x21), TIMELINE(0x22), USER_POSTS(0x23), MUTE(0x24), UNMUTE(0x25),
  HIDE(0x26), UNHIDE(0x27), MUTES(0x28), HIDES(0x29),
  SUBSCRIBE(0x30), EVENTS(0x31), FETCH_SNAPSHOT(0x32), SNAPSHOT_DATA(0x33), ACK(0x34),
  CURSORS(0x35), DELETE_CURSOR(0x36),
  REPLICATE(0x37), RECORDS(0x38), REPLICA_ACK(0x39), PROMOTE(0x3a), REPLICATION(0x3b),
  REPLICA_OF(0x3c), POSITION(0x3d), SHARD_MAP(0x3e), SLOWLOG(0x3f),
  BLOCK(0x40), UNBLOCK(0x41), BLOCKS(0x42), SET_PRIVATE(0x43), IS_PRIVATE(0x44), REQUESTS(0x45),
  APPROVE(0x46), REJECT(0x47), WITHDRAW(0x48);

  private static final Opcode[] BY_CODE = new Opcode[256];

  static {
    for (Opcode o : values()) BY_CODE[o.code] = o;
  }

  /** The byte on the wire. */
  public final int code;

  Opcode(int code) {
    this.code = code;
  }

  /** The opcode of a byte, or null when the protocol defines none. */
  public static Opcode of(int code) {
    return code >= 0 && code < 256 ? BY_CODE[code] : null;
  }

  /**
   * Whether the request may be sent again when the outcome of the first attempt is unknown
   * (docs/protocol.md "Retrying"): every request but PROMOTE and those that start a stream on
   * their connection (HELLO, SUBSCRIBE, REPLICATE, FETCH_SNAPSHOT).
   */
  public boolean retrySafe() {
    switch (this) {
      case HELLO: case PROMOTE: case SUBSCRIBE: case REPLICATE: case FETCH_SNAPSHOT:
        return false;
      default:
        return true;
    }
  }

  /** Whether the request only reads (a replica answers it); the others are writes. */
  public boolean readsOnly() {
    switch (this) {
      case PING: case INFO: case RELATION: case RELATIONS: case FOLLOWING: case FANS: case FRIENDS:
      case COUNTS: case KNOWN_FOLLOWERS: case TIMELINE: case USER_POSTS: case MUTES: case HIDES:
      case BLOCKS: case IS_PRIVATE: case REQUESTS: case CURSORS: case REPLICATION:
      case POSITION: case SHARD_MAP:
        return true;
      default:
        return false;
    }
  }
}
