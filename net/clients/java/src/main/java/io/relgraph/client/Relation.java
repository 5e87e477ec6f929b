package io.relgraph.client;

/**
 * relation(a, b): a set of bits (docs/protocol.md "Field types"). {@link #toString()} names it as
 * relgraph-cli does: "none", "following", "mutual", "following+requested_by", ...
 */
public record Relation(int bits) {
  public static final int FOLLOWING = 1; // a follows b
  public static final int FOLLOWED_BY = 2; // b follows a
  public static final int MUTUAL = 3; // both
  public static final int REQUESTED = 4; // a asked to follow b (pending)
  public static final int REQUESTED_BY = 8; // b asked to follow a
  public static final int BLOCKING = 16; // a blocks b
  public static final int BLOCKED_BY = 32; // b blocks a

  private static final Relation[] ALL = new Relation[256];
  private static final String[] NAMES = {
      "following", "followed_by", "requested", "requested_by", "blocking", "blocked_by"};

  static {
    for (int i = 0; i < 256; i++) ALL[i] = new Relation(i);
  }

  /** The relation of a wire byte (shared instances). */
  public static Relation of(int bits) {
    return ALL[bits & 0xff];
  }

  /** Whether every bit of {@code mask} is set. */
  public boolean has(int mask) {
    return (bits & mask) == mask;
  }

  public boolean isNone() {
    return bits == 0;
  }

  @Override
  public String toString() {
    if (bits > 63) return "invalid";
    StringBuilder out = new StringBuilder();
    int rest = bits;
    if ((bits & 3) == 3) {
      out.append("mutual");
      rest &= ~3;
    }
    for (int bit = 0; bit < 6; bit++) {
      if ((rest & (1 << bit)) != 0) {
        if (out.length() > 0) out.append('+');
        out.append(NAMES[bit]);
      }
    }
    return out.length() == 0 ? "none" : out.toString();
  }
}
