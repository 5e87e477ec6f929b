package io.relgraph.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * Throwaway certificates for the TLS tests, made with the openssl command line as
 * docs/security.md ("Certificates for a test setup") makes them: a CA, a server certificate for
 * localhost and 127.0.0.1, client certificates whose CN is a client's name, and a rogue CA with
 * a server certificate of its own. Keys are PKCS#8 PEM; EC P-256, or RSA where asked.
 */
final class TestCerts implements AutoCloseable {
  final Path dir;

  TestCerts() throws IOException, InterruptedException {
    dir = Files.createTempDirectory("relgraph-java-certs-");
    ca("ca", "relgraph test CA");
    ca("rogue-ca", "rogue CA");
  }

  Path crt(String name) {
    return dir.resolve(name + ".crt");
  }

  Path key(String name) {
    return dir.resolve(name + ".key");
  }

  /** A self-signed CA certificate {@code name.crt} and its key. */
  void ca(String name, String cn) throws IOException, InterruptedException {
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-days", "2", "-subj", "/CN=" + cn, "-keyout", key(name).toString(), "-out",
        crt(name).toString());
  }

  /**
   * {@code name.crt} signed by {@code ca}, with subject CN {@code cn} and (when not null) these
   * subjectAltNames; {@code rsa} for an RSA 2048 key instead of EC.
   */
  void leaf(String name, String ca, String cn, String san, boolean rsa)
      throws IOException, InterruptedException {
    leaf(name, ca, cn, san, rsa, 2);
  }

  /** As above, valid for {@code days} from now; -1: expired already (a day ago). */
  void leaf(String name, String ca, String cn, String san, boolean rsa, int days)
      throws IOException, InterruptedException {
    Path csr = dir.resolve(name + ".csr");
    List<String> req = new ArrayList<>(List.of("req", "-newkey"));
    req.addAll(rsa ? List.of("rsa:2048") : List.of("ec", "-pkeyopt", "ec_paramgen_curve:P-256"));
    req.addAll(List.of("-nodes", "-subj", "/CN=" + cn, "-keyout", key(name).toString(), "-out",
        csr.toString()));
    openssl(req.toArray(new String[0]));
    Path ext = dir.resolve(name + ".ext");
    Files.writeString(ext, (san != null ? "subjectAltName=" + san + "\n" : "")
        + "extendedKeyUsage=serverAuth,clientAuth\n");
    openssl("x509", "-req", "-in", csr.toString(), "-CA", crt(ca).toString(), "-CAkey",
        key(ca).toString(), "-CAcreateserial", "-days", String.valueOf(days), "-extfile",
        ext.toString(), "-out", crt(name).toString());
  }

  /** A server certificate for localhost and 127.0.0.1, signed by {@code ca}. */
  void server(String name, String ca) throws IOException, InterruptedException {
    leaf(name, ca, "localhost", "DNS:localhost,IP:127.0.0.1", false);
  }

  /** The SHA-256 of a token in hex, as a clients file's {@code token-sha256:} holds it. */
  static String sha256Hex(String token) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
          .digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }

  /** Writes a file in the certificates' directory. */
  Path write(String name, String text) throws IOException {
    return Files.writeString(dir.resolve(name), text);
  }

  void openssl(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of("openssl"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) throw new IOException(String.join(" ", cmd) + ": " + out);
  }

  @Override
  public void close() {
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // a temp dir left behind
    }
  }
}
