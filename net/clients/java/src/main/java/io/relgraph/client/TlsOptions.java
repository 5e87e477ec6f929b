package io.relgraph.client;

import java.nio.file.Path;
import javax.net.ssl.SSLContext;

/**
 * Whether and how a client speaks TLS to relgraphd (docs/security.md), as the C++ client's
 * {@code TlsClientOptions} (net/tls/tls_options.h): the same fields, in Java's idiom. Off
 * unless asked ({@link #off()}); start from {@link #systemCas()}, {@link #caFile(Path)} or
 * {@link #context(SSLContext)} and change with the with-methods. Immutable.
 *
 * <p>Either an {@link SSLContext} of the application's own (its key and trust managers decide
 * the client certificate and the CAs trusted), or PEM files the client reads itself: a CA
 * bundle to trust (else the JDK's default CAs), and a client certificate chain with its
 * unencrypted PKCS#8 key (RSA or EC; {@code openssl req -newkey} writes one) for mutual TLS.
 * A context, when given, wins over the files. With either, the server's certificate must name
 * the host connected to (or {@code serverName}): an IP address matches an IP SAN, a name a DNS
 * SAN.
 *
 * @param enabled      speak TLS (false: plain TCP, every other field ignored)
 * @param sslContext   the application's context; null: one built from the files below
 * @param caFile       PEM file of the CAs trusted to sign the server's certificate; null: the
 *                     JDK's default trust store
 * @param certFile     PEM file of the client certificate (chain) for mutual TLS; null: none
 * @param keyFile      its PKCS#8 PEM private key (RSA or EC)
 * @param serverName   the name the server's certificate must carry, sent as SNI; empty: the
 *                     host of the address connected to
 * @param verifyServer check the server's certificate chain and name (true unless
 *                     {@link #insecureSkipVerify()}); with a context only the name check is
 *                     skipped, its trust managers still decide the chain
 */
public record TlsOptions(boolean enabled, SSLContext sslContext, Path caFile, Path certFile,
    Path keyFile, String serverName, boolean verifyServer) {

  public TlsOptions {
    if (serverName == null) serverName = "";
    if ((certFile == null) != (keyFile == null)) {
      throw new IllegalArgumentException("TLS: a client certificate needs its key and a key its"
          + " certificate (certFile " + certFile + ", keyFile " + keyFile + ")");
    }
  }

  /** Plain TCP: the default. */
  public static TlsOptions off() {
    return new TlsOptions(false, null, null, null, null, "", true);
  }

  /** TLS, trusting the JDK's default CAs (relgraph-cli's {@code --tls}). */
  public static TlsOptions systemCas() {
    return new TlsOptions(true, null, null, null, null, "", true);
  }

  /** TLS, trusting the CAs of this PEM file (relgraph-cli's {@code --tls-ca=FILE}). */
  public static TlsOptions caFile(Path caFile) {
    return systemCas().withCaFile(caFile);
  }

  /**
   * TLS with the application's own context (its key managers present the client certificate,
   * its trust managers judge the server's chain); the PEM fields are then ignored.
   */
  public static TlsOptions context(SSLContext sslContext) {
    return new TlsOptions(true, sslContext, null, null, null, "", true);
  }

  public TlsOptions withCaFile(Path file) {
    return new TlsOptions(true, sslContext, file, certFile, keyFile, serverName, verifyServer);
  }

  /** A client certificate (PEM, the chain's leaf first) and its PKCS#8 key, for mutual TLS. */
  public TlsOptions withClientCert(Path cert, Path key) {
    return new TlsOptions(true, sslContext, caFile, cert, key, serverName, verifyServer);
  }

  /** The name the server's certificate must carry (and the SNI sent), instead of the host. */
  public TlsOptions withServerName(String name) {
    return new TlsOptions(true, sslContext, caFile, certFile, keyFile, name, verifyServer);
  }

  /**
   * DANGEROUS, for tests only: any server certificate is accepted, for any name. The link is
   * encrypted but anyone in the middle can read and change it.
   */
  public TlsOptions insecureSkipVerify() {
    return new TlsOptions(true, sslContext, caFile, certFile, keyFile, serverName, false);
  }
}
