package io.relgraph.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * TLS against real relgraphd processes (docs/security.md), each test starting its own on a free
 * loopback port with throwaway certificates ({@link TestCerts}): calls, the pool, the change
 * stream and reconnects over TLS; clients named by a token or by a certificate, with their
 * permissions; and each refusal of the security doc's table, said clearly.
 */
class TlsTest {
  static final String APP_TOKEN = "app-secret-token";
  static TestCerts certs;

  @BeforeAll
  static void makeCertificates() throws Exception {
    certs = new TestCerts();
    certs.server("server", "ca");
    certs.server("rogue-server", "rogue-ca");
    certs.leaf("elsewhere", "ca", "elsewhere.example", "DNS:elsewhere.example", false);
    certs.leaf("reader", "ca", "reader", null, true); // RSA: the PEM reader takes both kinds
    certs.leaf("app", "ca", "app", null, false);
    certs.leaf("expired", "ca", "localhost", "DNS:localhost,IP:127.0.0.1", false, -1);
    certs.write("clients", "# NAME  PERMISSIONS  CREDENTIAL\n"
        + "app read,write,stream token-sha256:" + TestCerts.sha256Hex(APP_TOKEN) + "\n"
        + "reader read cert\n");
  }

  @AfterAll
  static void removeCertificates() {
    if (certs != null) certs.close();
  }

  /** relgraphd's TLS flags for certificate {@code name}, plus more. */
  static String[] tlsFlags(String name, String... more) {
    List<String> f = new ArrayList<>(List.of("--tls-cert=" + certs.crt(name),
        "--tls-key=" + certs.key(name)));
    f.addAll(List.of(more));
    return f.toArray(new String[0]);
  }

  /** A server with the CA's certificate, asking for client certificates, with the clients file. */
  static TestServer clientsServer() throws Exception {
    return new TestServer(tlsFlags("server", "--tls-ca=" + certs.crt("ca"),
        "--clients-file=" + certs.dir.resolve("clients")));
  }

  static TlsOptions trustCa() {
    return TlsOptions.caFile(certs.crt("ca"));
  }

  /** One attempt, so a refusal is reported at once. */
  static ClientOptions once(TestServer srv, TlsOptions tls) {
    return srv.options().withTls(tls).withMaxRetries(0).withPoolSize(1);
  }

  static ConnectionException refused(Executable call) {
    return assertThrows(ConnectionException.class, call);
  }

  static void assertMentions(RelgraphException e, String... parts) {
    for (String p : parts) {
      assertTrue(e.getMessage().contains(p), "\"" + p + "\" in: " + e.getMessage());
    }
  }

  @Test
  void callsThePoolTheStreamAndReconnectsRunOverTls() throws Exception {
    try (TestServer srv = clientsServer();
         RelgraphClient c = RelgraphClient.connect(srv.options().withTls(trustCa())
             .withToken(APP_TOKEN).withPoolSize(3)
             .withBackoff(Duration.ofMillis(20), Duration.ofMillis(200)))) {
      assertTrue(c.follow(1, 2).created());
      assertTrue(c.follow(3, 2).created());
      Page fans = c.fans(PageQuery.of(2, 10));
      assertEquals(List.of(3L, 1L), fans.entries().stream().map(PageEntry::user).toList());
      assertEquals(new Counts(0, 2, 0), c.counts(2));

      // The pool: every slot dialed (round robin), many calls in flight across them.
      List<CompletableFuture<Counts>> calls = new ArrayList<>();
      for (int k = 0; k < 60; k++) calls.add(c.countsAsync(2));
      for (CompletableFuture<Counts> f : calls) assertEquals(2, f.get().fans());
      assertTrue(c.info().get("connections") >= 3, "three pooled TLS connections");

      // The change stream, on a connection of its own.
      try (Subscription s = c.subscribe(SubscribeOptions.fromNow())) {
        c.follow(4, 2);
        Event e = s.next(Duration.ofSeconds(20));
        assertNotNull(e, "the follow's event");
        assertEquals(4, e.a());
        assertEquals(2, e.b());
      }

      // A restart breaks every connection: the pool dials again, over TLS.
      srv.restart();
      assertEquals(new Counts(0, 3, 0), c.counts(2));

      // A wrong token is refused by HELLO, over TLS too (the server's error, not the link's).
      RelgraphException wrong = assertThrows(RelgraphException.class, () -> RelgraphClient
          .connect(srv.options().withTls(trustCa()).withToken("wrong").withMaxRetries(0)));
      assertEquals(ErrorCode.UNAUTHENTICATED, wrong.code());
      assertFalse(wrong instanceof ConnectionException);
    }
  }

  @Test
  void aClientNamedByItsCertificateHoldsItsPermissions() throws Exception {
    try (TestServer srv = clientsServer();
         RelgraphClient writer = RelgraphClient.connect(srv.options().withTls(trustCa())
             .withToken(APP_TOKEN));
         RelgraphClient reader = RelgraphClient.connect(srv.options()
             .withTls(trustCa().withClientCert(certs.crt("reader"), certs.key("reader"))))) {
      writer.follow(7, 8);
      RelgraphException denied = assertThrows(RelgraphException.class, () -> reader.follow(9, 8));
      assertEquals(ErrorCode.PERMISSION_DENIED, denied.code());
      assertEquals(new Counts(0, 1, 0), reader.counts(8));
      // A certificate the clients file does not name (and no token): not a client.
      RelgraphException stranger = assertThrows(RelgraphException.class, () -> RelgraphClient
          .connect(once(srv, trustCa().withClientCert(certs.crt("app"), certs.key("app")))));
      assertEquals(ErrorCode.UNAUTHENTICATED, stranger.code());
    }
  }

  @Test
  void anUntrustedServerIsRefusedUnlessVerificationIsOff() throws Exception {
    try (TestServer srv = new TestServer(tlsFlags("rogue-server"))) {
      ConnectionException e = refused(() -> RelgraphClient.connect(once(srv, trustCa())));
      assertEquals(ErrorCode.UNAUTHENTICATED, e.code());
      assertFalse(e.sent());
      assertMentions(e, "certificate verify failed", "not signed by a trusted CA");
      // The JDK's own CAs do not know it either.
      e = refused(() -> RelgraphClient.connect(once(srv, TlsOptions.systemCas())));
      assertMentions(e, "not signed by a trusted CA");
      // A pooled dial backing off after the refusal still says why.
      try (RelgraphClient c = RelgraphClient.create(once(srv, trustCa())
          .withBackoff(Duration.ofSeconds(20), Duration.ofSeconds(20)))) {
        refused(c::ping);
        ConnectionException again = refused(c::ping);
        assertEquals(ErrorCode.UNAUTHENTICATED, again.code());
        assertMentions(again, "backing off", "not signed by a trusted CA");
      }
      // Tests only: any certificate passes.
      try (RelgraphClient c = RelgraphClient.connect(once(srv, trustCa().insecureSkipVerify()))) {
        c.ping();
      }
    }
  }

  @Test
  void anExpiredServerCertificateIsRefused() throws Exception {
    // relgraphd will not start with an expired certificate, so a TLS endpoint of the test's
    // own presents it: one connection, whose handshake the client must refuse.
    KeyStore keys = KeyStore.getInstance("PKCS12");
    keys.load(null, null);
    keys.setKeyEntry("server", Pem.privateKey(certs.key("expired")), new char[0],
        Pem.certificates(certs.crt("expired")).toArray(new java.security.cert.Certificate[0]));
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(keys, new char[0]);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf.getKeyManagers(), null, null);
    try (SSLServerSocket listener = (SSLServerSocket) ctx.getServerSocketFactory()
        .createServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<Void> served = CompletableFuture.runAsync(() -> {
        try (SSLSocket s = (SSLSocket) listener.accept()) {
          s.startHandshake();
        } catch (IOException expected) {
          // the client refuses the certificate
        }
      });
      ConnectionException e = refused(() -> RelgraphClient.connect(ClientOptions
          .to("127.0.0.1:" + listener.getLocalPort()).withTls(trustCa()).withMaxRetries(0)));
      assertEquals(ErrorCode.UNAUTHENTICATED, e.code());
      assertMentions(e, "certificate verify failed", "has expired");
      served.get();
    }
  }

  @Test
  void aServerTricklingTheHandshakeCannotHoldTheDialPastConnectTimeout() throws Exception {
    // A record header announcing 16 KiB, then a byte every 100 ms: each read gets data well
    // within SO_TIMEOUT, so only a deadline on the whole handshake ends the dial.
    try (ServerSocket listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<Void> served = CompletableFuture.runAsync(() -> {
        try (Socket s = listener.accept()) {
          s.getInputStream().read(new byte[4096]); // the ClientHello
          OutputStream out = s.getOutputStream();
          out.write(new byte[] {22, 3, 3, 0x3f, (byte) 0xff});
          for (int k = 0; k < 600; k++) {
            out.write(1);
            out.flush();
            Thread.sleep(100);
          }
        } catch (IOException | InterruptedException closedByTheClient) {
          // the client gave up
        }
      });
      ClientOptions o = ClientOptions.to("127.0.0.1:" + listener.getLocalPort()).withTls(trustCa())
          .withMaxRetries(0).withConnectTimeout(Duration.ofMillis(500));
      ConnectionException e = assertTimeoutPreemptively(Duration.ofSeconds(30),
          () -> refused(() -> RelgraphClient.connect(o)));
      assertEquals(ErrorCode.TIMEOUT, e.code());
      assertMentions(e, "TLS handshake", "took more than 500 ms");
      served.get();
    }
  }

  @Test
  void aNameTheCertificateDoesNotCarryIsRefusedUnlessServerNameSaysIt() throws Exception {
    try (TestServer srv = new TestServer(tlsFlags("elsewhere"))) {
      ConnectionException e = refused(() -> RelgraphClient.connect(once(srv, trustCa())));
      assertEquals(ErrorCode.UNAUTHENTICATED, e.code());
      assertMentions(e, "hostname mismatch", "127.0.0.1");
      try (RelgraphClient c = RelgraphClient.connect(once(srv,
          trustCa().withServerName("elsewhere.example")))) {
        c.follow(1, 2);
        assertEquals(new Counts(1, 0, 0), c.counts(1));
      }
    }
  }

  @Test
  void mutualTlsWithoutAClientCertificateIsRefused() throws Exception {
    try (TestServer srv = new TestServer(tlsFlags("server", "--tls-ca=" + certs.crt("ca"),
        "--tls-require-client-cert"))) {
      ConnectionException e = refused(() -> RelgraphClient.connect(once(srv, trustCa())));
      assertEquals(ErrorCode.UNAUTHENTICATED, e.code());
      assertMentions(e, "client certificate");
      // A certificate of another CA is refused as well.
      e = refused(() -> RelgraphClient.connect(once(srv, trustCa()
          .withClientCert(certs.crt("rogue-server"), certs.key("rogue-server")))));
      assertEquals(ErrorCode.UNAUTHENTICATED, e.code());
      try (RelgraphClient c = RelgraphClient.connect(once(srv,
          trustCa().withClientCert(certs.crt("reader"), certs.key("reader"))))) {
        c.ping();
      }
    }
  }

  @Test
  void aTlsClientAtAPlainPortIsToldSo() throws Exception {
    try (TestServer srv = new TestServer()) {
      ConnectionException e = refused(() -> RelgraphClient.connect(once(srv, trustCa())));
      assertEquals(ErrorCode.PROTOCOL_ERROR, e.code());
      assertMentions(e, "the server answered in plain text; is TLS enabled on it?",
          "this port does not speak TLS");
    }
  }

  @Test
  void aPlainClientAtATlsPortIsToldSo() throws Exception {
    try (TestServer srv = new TestServer(tlsFlags("server"))) {
      ConnectionException e = refused(() -> RelgraphClient.connect(once(srv, TlsOptions.off())));
      assertEquals(ErrorCode.PROTOCOL_ERROR, e.code());
      assertMentions(e, "this port speaks TLS only");
    }
  }

  @Test
  void anSslContextOfTheApplicationWinsOverTheFiles() throws Exception {
    KeyStore trust = KeyStore.getInstance("PKCS12");
    trust.load(null, null);
    try (InputStream in = Files.newInputStream(certs.crt("ca"))) {
      trust.setCertificateEntry("ca",
          CertificateFactory.getInstance("X.509").generateCertificate(in));
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    try (TestServer srv = new TestServer(tlsFlags("server"));
         // The rogue CA file is ignored: the context trusts the right CA.
         RelgraphClient c = RelgraphClient.connect(once(srv,
             TlsOptions.context(ctx).withCaFile(certs.crt("rogue-ca"))))) {
      c.ping();
    }
  }

  @Test
  void unreadableOrWrongPemFilesAreNamed() throws Exception {
    Path missing = certs.dir.resolve("missing.crt");
    try (TestServer srv = new TestServer(tlsFlags("server"))) {
      ConnectionException e = refused(() -> RelgraphClient.connect(once(srv,
          TlsOptions.caFile(missing))));
      assertEquals(ErrorCode.INVALID_ARGUMENT, e.code());
      assertMentions(e, missing.toString());
      // A key where the certificate should be, and a PKCS#1 key where PKCS#8 should be.
      e = refused(() -> RelgraphClient.connect(once(srv, TlsOptions.caFile(certs.key("ca")))));
      assertMentions(e, "no \"-----BEGIN CERTIFICATE-----\" block");
      Path pkcs1 = certs.dir.resolve("pkcs1.key");
      certs.openssl("genrsa", "-traditional", "-out", pkcs1.toString(), "2048");
      e = refused(() -> RelgraphClient.connect(once(srv,
          trustCa().withClientCert(certs.crt("reader"), pkcs1))));
      assertMentions(e, "RSA PRIVATE KEY", "openssl pkcs8 -topk8 -nocrypt");
    }
    assertInstanceOf(IllegalArgumentException.class, assertThrows(IllegalArgumentException.class,
        () -> trustCa().withClientCert(certs.crt("reader"), null)));
  }

  @Test
  void theClusterClientSpeaksTlsToEveryShard() throws Exception {
    TlsOptions tls = trustCa().withClientCert(certs.crt("app"), certs.key("app"));
    try (TestCluster cluster = new TestCluster(2, 1, List.of(tlsFlags("server",
        "--tls-ca=" + certs.crt("ca"), "--tls-require-client-cert")), tls);
         ClusterClient c = ClusterClient.connect(ClusterOptions.seeds(cluster.address(1))
             .withTls(tls))) {
      for (long u = 1; u <= 40; u++) c.follow(u, 1000);
      for (long u = 1; u <= 40; u++) c.follow(1000, u);
      c.barrier(Duration.ofSeconds(30));
      assertEquals(new Counts(40, 40, 40), c.counts(1000));
      for (long u = 1; u <= 40; u++) assertEquals(new Counts(1, 1, 1), c.counts(u));
      // Both shards were reached, each over TLS (a plain connection is refused by them).
      c.shard(1).ping();
      c.shard(2).ping();
      refused(() -> RelgraphClient.connect(ClientOptions.to(cluster.address(2)).withMaxRetries(0)));
    }
  }
}
