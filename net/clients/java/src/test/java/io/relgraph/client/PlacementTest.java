package io.relgraph.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The bucket hash against docs/cluster.md's test vectors, and the shard map's text form. */
class PlacementTest {
  /** The rows of the table after "Bucket test vectors" in docs/cluster.md: id, XXH3-64, bucket of 1024. */
  static List<String[]> bucketVectors() throws IOException {
    String doc = Files.readString(Path.of(TestServer.env("RELGRAPH_CLUSTER_DOC", "../../../docs/cluster.md")));
    int at = doc.indexOf("Bucket test vectors");
    if (at < 0) throw new AssertionError("docs/cluster.md has no 'Bucket test vectors'");
    List<String[]> rows = new ArrayList<>();
    boolean inTable = false;
    for (String line : doc.substring(at).split("\n")) {
      if (!line.startsWith("|")) {
        if (inTable) break;
        continue;
      }
      inTable = true;
      String[] cells = line.split("\\|");
      if (!cells[1].trim().matches("[0-9]+")) continue; // header and rule
      rows.add(new String[] {cells[1].trim(), cells[2].trim(), cells[3].trim()});
    }
    return rows;
  }

  @Test
  void bucketHashMatchesTheDocsVectors() throws IOException {
    List<String[]> rows = bucketVectors();
    assertTrue(rows.size() >= 9, "read " + rows.size() + " vectors from docs/cluster.md");
    for (String[] row : rows) {
      long id = Long.parseUnsignedLong(row[0]);
      assertEquals(row[1], Long.toUnsignedString(Xxh3.hashId(id)), "XXH3-64 of id " + row[0]);
      assertEquals(Integer.parseInt(row[2]), Xxh3.bucketOf(id, 1024), "bucket of id " + row[0]);
    }
  }

  @Test
  void shortInputPathReadsBothEndsOfEveryLength() {
    // Lengths 4..8 read the first and last four bytes: for length 4 they are the same bytes, so
    // the hash depends on the length too; an input differing in one byte hashes differently.
    byte[] b = {1, 2, 3, 4, 5, 6, 7, 8};
    long[] seen = new long[5];
    for (int len = 4; len <= 8; len++) {
      seen[len - 4] = Xxh3.hash4to8(b, 0, len);
      for (int k = 0; k < len - 4; k++) assertTrue(seen[len - 4] != seen[k], "length " + len);
      byte[] c = b.clone();
      c[len - 1] ^= 1;
      assertTrue(Xxh3.hash4to8(c, 0, len) != seen[len - 4], "last byte of length " + len);
    }
    assertEquals(Xxh3.hashId(42), Xxh3.hash4to8(new byte[] {9, 42, 0, 0, 0, 0, 0, 0, 0}, 1, 8));
    assertThrows(IllegalArgumentException.class, () -> Xxh3.hash4to8(b, 0, 3));
  }

  static final String MAP = String.join("\n",
      "relgraph-cluster-map 1",
      "version 7",
      "relgraph-shard-map 1",
      "buckets 16",
      "generation 3",
      "shard 1 127.0.0.1:7701",
      "shard 2 127.0.0.1:7702,127.0.0.1:7712 group users-2",
      "owner 0-9 1",
      "owner 10-15 2",
      "move 8-9 1 2 prepare 5 1700000000000",
      "");

  @Test
  void versionedMapParses() {
    ShardMap m = ShardMap.parseVersioned(MAP);
    assertEquals(7, m.version());
    assertEquals(3, m.generation());
    assertEquals(16, m.buckets());
    assertEquals(2, m.shards().size());
    ShardMap.Shard two = m.find(2);
    assertTrue(two.grouped());
    assertEquals("users-2", two.group());
    assertEquals(List.of("127.0.0.1:7702", "127.0.0.1:7712"), two.addresses());
    assertEquals("127.0.0.1:7702", two.address());
    assertEquals(List.of("127.0.0.1:7701"), m.find(1).addresses());
    assertNull(m.find(3));
    assertEquals(new ShardMap.Move(8, 9, 1, 2, "prepare", 5), m.move());
    Random rng = new Random(7);
    for (int i = 0; i < 1000; i++) {
      long user = rng.nextLong();
      assertEquals(Xxh3.bucketOf(user, 16) <= 9 ? 1 : 2, m.ownerOf(user));
    }
  }

  @Test
  void newerIsByGenerationThenVersion() {
    ShardMap a = ShardMap.parseVersioned(MAP);
    ShardMap b = ShardMap.parseVersioned(MAP.replace("version 7", "version 8"));
    ShardMap restored = ShardMap.parseVersioned(
        MAP.replace("version 7", "version 1").replace("generation 3", "generation 4"));
    ShardMap gen1 = ShardMap.parseVersioned(MAP.replace("version 7", "version 99")
        .replace("generation 3\n", ""));
    assertTrue(b.newerThan(a));
    assertTrue(!a.newerThan(b) && !a.newerThan(a));
    assertTrue(restored.newerThan(b));
    assertEquals(1, gen1.generation());
    assertTrue(a.newerThan(gen1));
  }

  @Test
  void malformedMapsAreRefusedNamingTheLine() {
    String[][] cases = {
        {"relgraph-cluster-map 1", "does not start"},
        {"version 7", "'version N'"},
        {"owner 10-15 2", "bucket 10 has no owner"},
        {"owner 0-9 1", "bucket 9 has no owner"},
        {"owner 10-15 2", "owned twice"},
        {"buckets 16", "not a buckets"},
        {"shard 1 127.0.0.1:7701", "listed twice"},
        {"owner 10-15 2", "outside 0-15"},
        {"shard 1 127.0.0.1:7701", "expected host:port"},
        {"owner 10-15 2", "which it does not list"},
        {"move 8-9 1 2 prepare 5 1700000000000", "expected prepare, flip or copy"},
    };
    String[] replacements = {
        "relgraph-cluster-map 2", "versio 7", "", "owner 0-8 1", "owner 10-15 2\nowner 15-15 1",
        "buckets 16\nbuckets 16", "shard 1 127.0.0.1:7701\nshard 1 127.0.0.1:7703", "owner 10-16 2",
        "shard 1 127.0.0.1", "owner 10-15 3", "move 8-9 1 2 moving 5",
    };
    for (int i = 0; i < cases.length; i++) {
      String text = MAP.replace(cases[i][0], replacements[i]);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> ShardMap.parseVersioned(text), cases[i][1]);
      assertTrue(e.getMessage().contains(cases[i][1]), e.getMessage() + " lacks " + cases[i][1]);
    }
  }
}
