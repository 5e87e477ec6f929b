package io.relgraph.client;

/**
 * Where a subscription starts and what it carries: from an LSN (at least 1), from now, or after
 * a named cursor's acknowledged LSN; {@code kinds}: bit k selects event kind k (0: every kind).
 */
public record SubscribeOptions(From from, long lsn, long kinds, String name) {
  /** SUBSCRIBE's {@code from} byte. */
  public enum From {
    LSN(0), NOW(1), CURSOR(2);

    public final int code;

    From(int code) {
      this.code = code;
    }
  }

  public static SubscribeOptions fromLsn(long lsn) {
    return new SubscribeOptions(From.LSN, lsn, 0, "");
  }

  public static SubscribeOptions fromNow() {
    return new SubscribeOptions(From.NOW, 0, 0, "");
  }

  public static SubscribeOptions fromCursor(String name) {
    return new SubscribeOptions(From.CURSOR, 0, 0, name);
  }

  /** Only events of these kinds (EventKind constants, ORed as bits 1 << kind). */
  public SubscribeOptions withKinds(long kinds) {
    return new SubscribeOptions(from, lsn, kinds, name);
  }
}
