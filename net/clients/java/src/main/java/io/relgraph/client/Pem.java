package io.relgraph.client;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * PEM files as TLS needs them, with the JDK alone: X.509 certificates (a CA bundle, a client's
 * chain) and unencrypted PKCS#8 private keys, RSA or EC. Text around the blocks (openssl's
 * human-readable dump, comments) is skipped. Errors are IllegalArgumentException naming the file
 * and what to do.
 *
 * <p>Thread-safety: pure functions.
 */
final class Pem {
  private Pem() {}

  /** One {@code -----BEGIN label-----} ... {@code -----END label-----} block, decoded. */
  record Block(String label, byte[] der) {}

  static List<Block> blocks(String text, Path file) {
    List<Block> out = new ArrayList<>();
    int at = 0;
    while (true) {
      int begin = text.indexOf("-----BEGIN ", at);
      if (begin < 0) return out;
      int labelEnd = text.indexOf("-----", begin + 11);
      if (labelEnd < 0) throw bad(file, "a BEGIN line without its closing dashes");
      String label = text.substring(begin + 11, labelEnd);
      String endLine = "-----END " + label + "-----";
      int end = text.indexOf(endLine, labelEnd + 5);
      if (end < 0) throw bad(file, "no \"" + endLine + "\"");
      String body = text.substring(labelEnd + 5, end);
      if (body.contains(":")) {
        throw bad(file, "the " + label + " block has headers (an encrypted key?): give an"
            + " unencrypted PKCS#8 key (openssl pkcs8 -topk8 -nocrypt)");
      }
      try {
        out.add(new Block(label, Base64.getMimeDecoder().decode(body)));
      } catch (IllegalArgumentException e) {
        throw bad(file, "the " + label + " block is not base64: " + e.getMessage());
      }
      at = end + endLine.length();
    }
  }

  /** Every CERTIFICATE block of the file, in order; at least one. */
  static List<X509Certificate> certificates(Path file) {
    List<X509Certificate> certs = new ArrayList<>();
    try {
      CertificateFactory f = CertificateFactory.getInstance("X.509");
      for (Block b : blocks(read(file), file)) {
        if (!b.label().equals("CERTIFICATE")) continue;
        certs.add((X509Certificate) f.generateCertificate(new ByteArrayInputStream(b.der())));
      }
    } catch (GeneralSecurityException e) {
      throw bad(file, "a certificate does not parse: " + e.getMessage());
    }
    if (certs.isEmpty()) throw bad(file, "no \"-----BEGIN CERTIFICATE-----\" block");
    return certs;
  }

  /** The file's PRIVATE KEY block (PKCS#8, unencrypted), as an RSA or EC key. */
  static PrivateKey privateKey(Path file) {
    for (Block b : blocks(read(file), file)) {
      switch (b.label()) {
        case "PRIVATE KEY":
          for (String algorithm : new String[] {"RSA", "EC"}) {
            try {
              return KeyFactory.getInstance(algorithm)
                  .generatePrivate(new PKCS8EncodedKeySpec(b.der()));
            } catch (GeneralSecurityException notThisOne) {
              // try the next algorithm
            }
          }
          throw bad(file, "the PKCS#8 key is neither RSA nor EC");
        case "RSA PRIVATE KEY":
        case "EC PRIVATE KEY":
          throw bad(file, "a " + b.label() + " (PKCS#1/SEC1) block: convert it to PKCS#8 with"
              + " openssl pkcs8 -topk8 -nocrypt -in " + file + " -out KEY.pk8");
        case "ENCRYPTED PRIVATE KEY":
          throw bad(file, "the key is encrypted: give an unencrypted PKCS#8 key (openssl pkcs8"
              + " -topk8 -nocrypt), or build an SSLContext of your own (TlsOptions.context)");
        default:
          break;
      }
    }
    throw bad(file, "no \"-----BEGIN PRIVATE KEY-----\" block");
  }

  private static String read(Path file) {
    try {
      return new String(Files.readAllBytes(file), StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new IllegalArgumentException("TLS: cannot read " + file + ": " + e, e);
    }
  }

  private static IllegalArgumentException bad(Path file, String why) {
    return new IllegalArgumentException("TLS: " + file + ": " + why);
  }
}
