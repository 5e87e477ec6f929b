package io.relgraph.client;

/**
 * The bucket hash of a cluster (docs/cluster.md, "Placement"): XXH3-64 with seed 0 and the
 * default secret, for inputs of 4 to 8 bytes (its short-input path, {@code XXH3_len_4to8_64b}
 * of xxHash 0.8), which is every input a user id gives. Checked against the "Bucket test
 * vectors" table of docs/cluster.md. Pure functions; thread-safe.
 */
public final class Xxh3 {
  private Xxh3() {}

  // Bytes 8..15 and 16..23 of XXH3's default secret (kSecret), read little-endian.
  private static final long SECRET_8 = 0x1cad21f72c81017cL;
  private static final long SECRET_16 = 0xdb979083e96dd4deL;
  private static final long PRIME_MX2 = 0x9fb21c651e98df25L;

  /** XXH3-64 (seed 0) of {@code len} bytes of {@code in} from {@code off}; REQUIRES 4 <= len <= 8. */
  public static long hash4to8(byte[] in, int off, int len) {
    if (len < 4 || len > 8) throw new IllegalArgumentException("XXH3 short path: length " + len);
    long input1 = readLE32(in, off);
    long input2 = readLE32(in, off + len - 4);
    long bitflip = SECRET_8 ^ SECRET_16; // minus the seed, 0
    long keyed = (input2 + (input1 << 32)) ^ bitflip;
    return rrmxmx(keyed, len);
  }

  /** XXH3-64 (seed 0) of the user id's 8 little-endian bytes. */
  public static long hashId(long id) {
    byte[] b = new byte[8];
    for (int i = 0; i < 8; i++) b[i] = (byte) (id >>> (8 * i));
    return hash4to8(b, 0, 8);
  }

  /** The bucket of {@code user} among {@code buckets} (1..65536): the hash, unsigned, modulo. */
  public static int bucketOf(long user, int buckets) {
    return (int) Long.remainderUnsigned(hashId(user), buckets);
  }

  private static long readLE32(byte[] b, int at) {
    return (b[at] & 0xffL) | (b[at + 1] & 0xffL) << 8 | (b[at + 2] & 0xffL) << 16
        | (b[at + 3] & 0xffL) << 24;
  }

  private static long rrmxmx(long h, int len) {
    h ^= Long.rotateLeft(h, 49) ^ Long.rotateLeft(h, 24);
    h *= PRIME_MX2;
    h ^= (h >>> 35) + len;
    h *= PRIME_MX2;
    return h ^ (h >>> 28);
  }
}
