package io.relgraph.client;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Builds one request body in the field types of docs/protocol.md: little-endian integers,
 * {@code string := len:u16 bytes}, {@code opt<T> := u8 0 | u8 1 T}, {@code list<T> := count:u16 T*}.
 * Not thread-safe: one per request.
 */
public final class WireWriter {
  private byte[] buf;
  private int len;

  public WireWriter() {
    this(32);
  }

  public WireWriter(int capacity) {
    buf = new byte[Math.max(8, capacity)];
  }

  private void need(int n) {
    if (len + n > buf.length) buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
  }

  public WireWriter u8(int v) {
    need(1);
    buf[len++] = (byte) v;
    return this;
  }

  public WireWriter bool(boolean v) {
    return u8(v ? 1 : 0);
  }

  public WireWriter u16(int v) {
    need(2);
    buf[len++] = (byte) v;
    buf[len++] = (byte) (v >>> 8);
    return this;
  }

  public WireWriter u32(long v) {
    need(4);
    for (int i = 0; i < 4; i++) buf[len++] = (byte) (v >>> (8 * i));
    return this;
  }

  /** A u64 or an i64: the same 8 little-endian bytes of the long. */
  public WireWriter u64(long v) {
    need(8);
    for (int i = 0; i < 8; i++) buf[len++] = (byte) (v >>> (8 * i));
    return this;
  }

  public WireWriter i64(long v) {
    return u64(v);
  }

  public WireWriter str(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    if (b.length > 0xffff) throw new IllegalArgumentException("string longer than 65535 bytes");
    u16(b.length);
    need(b.length);
    System.arraycopy(b, 0, buf, len, b.length);
    len += b.length;
    return this;
  }

  /** opt&lt;i64&gt; / opt&lt;u64&gt; from a nullable Long. */
  public WireWriter optU64(Long v) {
    if (v == null) return u8(0);
    return u8(1).u64(v);
  }

  public byte[] toBytes() {
    return Arrays.copyOf(buf, len);
  }
}
