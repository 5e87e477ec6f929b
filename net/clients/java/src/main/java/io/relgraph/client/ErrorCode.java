package io.relgraph.client;

/** The protocol's error codes (docs/protocol.md "Errors"; storage/status.h, never renumbered). */
public enum ErrorCode {
  INVALID_ARGUMENT(1), INVALID_USER_ID(2), SELF_FOLLOW(3), FOLLOW_LIMIT(4), RATE_LIMITED(5),
  NOT_FOUND(6), CORRUPTION(7), IO_ERROR(8), UNAVAILABLE(9), INTERNAL(10), UNAUTHENTICATED(11),
  RESOURCE_EXHAUSTED(12), PROTOCOL_ERROR(13), UNSUPPORTED(14), TIMEOUT(15), ALREADY_EXISTS(16),
  LIMIT_EXCEEDED(17), LSN_EXPIRED(18), READ_ONLY(19), DIVERGED(20), BLOCKED(21), MOVED(22),
  MOVING(23), PERMISSION_DENIED(24),
  /** A code this client does not know (a newer server); {@link RelgraphException#rawCode()} has it. */
  UNKNOWN(-1);

  /** The status byte on the wire. */
  public final int code;

  ErrorCode(int code) {
    this.code = code;
  }

  /** The code of a status byte; UNKNOWN when this client does not know it. */
  public static ErrorCode of(int code) {
    for (ErrorCode c : values()) {
      if (c.code == code) return c;
    }
    return UNKNOWN;
  }

  /** The name docs/protocol.md and relgraph-cli use: "self_follow", "read_only", ... */
  public String wireName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
