package io.relgraph.client;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The hex tables of docs/protocol.md, read at test time. */
final class DocTables {
  /** One table row: its first cell and every hex cell in order (null for a cell holding no hex). */
  record Row(String what, List<byte[]> hex, List<String> raw) {}

  private static final Pattern CODE = Pattern.compile("`([0-9a-f ]+)`");

  static String doc() throws IOException {
    return Files.readString(Path.of(TestServer.protocolDoc()));
  }

  /** The rows of the first table after the heading {@code ## title} (header and rule skipped). */
  static List<Row> table(String doc, String heading) {
    int at = doc.indexOf("\n" + heading + "\n");
    if (at < 0) throw new AssertionError("docs/protocol.md has no " + heading);
    String[] lines = doc.substring(at + heading.length() + 2).split("\n");
    List<Row> rows = new ArrayList<>();
    boolean inTable = false;
    int seen = 0;
    for (String line : lines) {
      if (line.startsWith("## ") || line.startsWith("### ")) break;
      if (!line.startsWith("|")) {
        if (inTable) break;
        continue;
      }
      inTable = true;
      if (seen++ < 2) continue; // header and |---|
      String[] cells = line.split("\\|");
      List<byte[]> hex = new ArrayList<>();
      List<String> raw = new ArrayList<>();
      for (int i = 2; i < cells.length; i++) {
        raw.add(cells[i].trim());
        Matcher m = CODE.matcher(cells[i]);
        hex.add(m.find() ? parse(m.group(1)) : null);
      }
      rows.add(new Row(cells[1].trim(), hex, raw));
    }
    return rows;
  }

  /** Every table row under a heading, across the several tables it may hold. */
  static List<Row> tables(String doc, String heading) {
    int at = doc.indexOf("\n" + heading + "\n");
    String rest = doc.substring(at + heading.length() + 2);
    int end = rest.indexOf("\n## ");
    if (end >= 0) rest = rest.substring(0, end);
    List<Row> rows = new ArrayList<>();
    String[] parts = rest.split("\n\n");
    for (String part : parts) {
      if (part.trim().startsWith("|")) rows.addAll(table("\n" + heading + "\n" + part.trim(), heading));
    }
    return rows;
  }

  static byte[] parse(String hex) {
    String[] parts = hex.trim().split("\\s+");
    byte[] out = new byte[parts.length];
    for (int i = 0; i < parts.length; i++) out[i] = (byte) Integer.parseInt(parts[i], 16);
    return out;
  }

  static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) s.append(String.format("%02x ", x & 0xff));
    return s.toString().trim();
  }
}
