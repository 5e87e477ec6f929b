package io.relgraph.client;

import java.nio.charset.StandardCharsets;

/**
 * Reads one reply body in the field types of docs/protocol.md. A body must hold exactly its
 * fields: {@link #end()} fails on trailing bytes, and reading past the end fails with
 * PROTOCOL_ERROR. Not thread-safe: one per body.
 */
public final class WireReader {
  private final byte[] buf;
  private int pos;
  private final int end;
  private final Opcode op;

  public WireReader(byte[] buf, int off, int len, Opcode op) {
    this.buf = buf;
    this.pos = off;
    this.end = off + len;
    this.op = op;
  }

  public WireReader(byte[] body, Opcode op) {
    this(body, 0, body.length, op);
  }

  private RelgraphException bad(String what) {
    return new RelgraphException(ErrorCode.PROTOCOL_ERROR.code, 0, "reply body " + what, op);
  }

  private void need(int n) {
    if (end - pos < n) throw bad("too short");
  }

  public int remaining() {
    return end - pos;
  }

  public int u8() {
    need(1);
    return buf[pos++] & 0xff;
  }

  public boolean bool() {
    int v = u8();
    if (v > 1) throw bad("holds a bool that is not 0 or 1");
    return v == 1;
  }

  public int u16() {
    need(2);
    int v = (buf[pos] & 0xff) | (buf[pos + 1] & 0xff) << 8;
    pos += 2;
    return v;
  }

  public long u32() {
    need(4);
    long v = 0;
    for (int i = 0; i < 4; i++) v |= (long) (buf[pos + i] & 0xff) << (8 * i);
    pos += 4;
    return v;
  }

  /** A u64 (to be read as unsigned: Long.toUnsignedString) or an i64. */
  public long u64() {
    need(8);
    long v = 0;
    for (int i = 0; i < 8; i++) v |= (long) (buf[pos + i] & 0xff) << (8 * i);
    pos += 8;
    return v;
  }

  public long i64() {
    return u64();
  }

  public String str() {
    int n = u16();
    need(n);
    String s = new String(buf, pos, n, StandardCharsets.UTF_8);
    pos += n;
    return s;
  }

  public byte[] bytes(int n) {
    need(n);
    byte[] out = java.util.Arrays.copyOfRange(buf, pos, pos + n);
    pos += n;
    return out;
  }

  /** The rest of the body. */
  public byte[] rest() {
    return bytes(end - pos);
  }

  /** opt's presence byte. */
  public boolean present() {
    int v = u8();
    if (v > 1) throw bad("holds an opt tag that is not 0 or 1");
    return v == 1;
  }

  public long[] u64s() {
    int n = u16();
    long[] out = new long[n];
    for (int i = 0; i < n; i++) out[i] = u64();
    return out;
  }

  /** Fails when bytes are left over. */
  public void end() {
    if (pos != end) throw bad("has " + (end - pos) + " trailing bytes");
  }
}
