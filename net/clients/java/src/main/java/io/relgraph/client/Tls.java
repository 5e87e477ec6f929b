package io.relgraph.client;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * A client's TLS (docs/security.md): the context built from {@link TlsOptions} (once, at the
 * first handshake) and the handshake on a freshly connected socket, before HELLO.
 *
 * <p>Why this design: the TLS socket is layered over a plain socket the client connected
 * itself (not closed with it), whose input is recorded until the handshake ends. So when the
 * handshake fails because a plain relgraphd answered the ClientHello with a plain error frame,
 * the frame's first bytes are at hand and the rest can still be read, and the client says what
 * the server said instead of "unrecognized SSL message" ({@link TlsFailure}).
 *
 * <p>Thread-safety: any thread; the context is built once.
 */
final class Tls {
  /** What is kept of the server's bytes during a handshake, to explain a failure. */
  static final int RECORDED_BYTES = 4096;

  private final TlsOptions options;
  private volatile SSLContext context; // built at the first handshake that needs it

  private Tls(TlsOptions options) {
    this.options = options;
  }

  /** The TLS of these options; null when they say plain TCP. */
  static Tls of(TlsOptions options) {
    return options != null && options.enabled() ? new Tls(options) : null;
  }

  TlsOptions options() {
    return options;
  }

  /** A socket to connect, which can tell what the server sent during the handshake. */
  static Socket newSocket(Tls tls) {
    return tls == null ? new Socket() : new RecordingSocket();
  }

  /**
   * Runs the handshake on {@code raw} (connected by {@link #newSocket}, its SO_TIMEOUT the time
   * left) and returns the TLS socket over it. {@code raw} stays open on failure: the caller
   * closes it. Throws SocketTimeoutException when the server did not answer in time, else a
   * {@link ConnectionException} saying why ({@link TlsFailure}).
   */
  SSLSocket handshake(Socket raw, InetSocketAddress address, long deadlineNanos)
      throws SocketTimeoutException {
    String host = options.serverName().isEmpty() ? address.getHostString() : options.serverName();
    String where = address.getHostString() + ":" + address.getPort();
    SSLSocket s = null;
    try {
      s = (SSLSocket) context().getSocketFactory()
          .createSocket(raw, host, address.getPort(), false); // raw stays open on failure
      SSLParameters p = s.getSSLParameters();
      List<String> versions = new ArrayList<>(Arrays.asList(s.getSupportedProtocols()));
      versions.retainAll(List.of("TLSv1.3", "TLSv1.2")); // as the server: nothing older
      p.setProtocols(versions.toArray(new String[0]));
      if (options.verifyServer()) p.setEndpointIdentificationAlgorithm("HTTPS");
      if (!isIpLiteral(host)) p.setServerNames(List.of(new SNIHostName(host)));
      s.setSSLParameters(p);
      s.startHandshake();
      ((RecordingSocket) raw).stopRecording();
      return s;
    } catch (SocketTimeoutException e) {
      closeQuietly(s);
      throw e;
    } catch (IOException | IllegalArgumentException e) {
      closeQuietly(s);
      if (TlsFailure.causedBy(e, SocketTimeoutException.class) != null) {
        throw new SocketTimeoutException("TLS handshake: " + e.getMessage());
      }
      String plain = ((RecordingSocket) raw).plainReply(deadlineNanos);
      throw TlsFailure.handshake(where, host, e, plain, hasClientCert());
    }
  }

  /** A failure after the handshake, on the way to HELLO's reply. */
  ConnectionException afterHandshake(InetSocketAddress address, IOException e) {
    return TlsFailure.afterHandshake(address.getHostString() + ":" + address.getPort(), e,
        hasClientCert());
  }

  private boolean hasClientCert() {
    return options.sslContext() != null || options.certFile() != null;
  }

  private static boolean isIpLiteral(String host) {
    return host.contains(":") || host.chars().allMatch(c -> c == '.' || (c >= '0' && c <= '9'));
  }

  private SSLContext context() {
    SSLContext c = context;
    if (c != null) return c;
    synchronized (this) {
      if (context != null) return context;
      try {
        c = options.sslContext() != null ? options.sslContext() : build(options);
      } catch (GeneralSecurityException | IOException | IllegalArgumentException e) {
        throw new ConnectionException(ErrorCode.INVALID_ARGUMENT.code,
            e instanceof IllegalArgumentException ? e.getMessage() : "TLS: " + e, false,
            Opcode.HELLO, e);
      }
      context = c;
      return c;
    }
  }

  /** The context of the PEM files: their CAs (or the JDK's), their client certificate. */
  static SSLContext build(TlsOptions o) throws GeneralSecurityException, IOException {
    char[] password = new char[0]; // an in-memory store: the password protects nothing
    KeyManager[] keys = null;
    if (o.certFile() != null) {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      List<X509Certificate> chain = Pem.certificates(o.certFile());
      ks.setKeyEntry("client", Pem.privateKey(o.keyFile()), password,
          chain.toArray(new X509Certificate[0]));
      KeyManagerFactory kmf =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(ks, password);
      keys = kmf.getKeyManagers();
    }
    TrustManager[] trust;
    if (!o.verifyServer()) {
      trust = new TrustManager[] {new TrustAnything()};
    } else if (o.caFile() != null) {
      KeyStore ts = KeyStore.getInstance("PKCS12");
      ts.load(null, null);
      int i = 0;
      for (X509Certificate ca : Pem.certificates(o.caFile())) {
        ts.setCertificateEntry("ca-" + i++, ca);
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(ts);
      trust = tmf.getTrustManagers();
    } else {
      trust = null; // the JDK's default trust store
    }
    SSLContext c = SSLContext.getInstance("TLS");
    c.init(keys, trust, null);
    return c;
  }

  private static void closeQuietly(Socket s) {
    if (s == null) return;
    try {
      s.close();
    } catch (IOException ignored) {
      // closing: nothing to do
    }
  }

  /** {@link TlsOptions#insecureSkipVerify()}: every certificate passes. Tests only. */
  private static final class TrustAnything extends X509ExtendedTrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String auth, Socket s) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String auth, Socket s) {}

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String auth, SSLEngine e) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String auth, SSLEngine e) {}

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String auth) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String auth) {}

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }

  /**
   * A plain socket whose input (what the TLS layer reads) is recorded, the first
   * {@link #RECORDED_BYTES}, until {@link #stopRecording}.
   */
  private static final class RecordingSocket extends Socket {
    private final byte[] seen = new byte[RECORDED_BYTES];
    private int seenLen; // guarded by this
    private volatile boolean recording = true;
    private InputStream wrapped; // guarded by this

    @Override
    public synchronized InputStream getInputStream() throws IOException {
      if (wrapped == null) {
        wrapped = new FilterInputStream(super.getInputStream()) {
          @Override
          public int read() throws IOException {
            int b = super.read();
            if (b >= 0) record(new byte[] {(byte) b}, 0, 1);
            return b;
          }

          @Override
          public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n > 0) record(b, off, n);
            return n;
          }
        };
      }
      return wrapped;
    }

    private void record(byte[] b, int off, int n) {
      if (!recording) return;
      synchronized (this) {
        int k = Math.min(n, seen.length - seenLen);
        System.arraycopy(b, off, seen, seenLen, k);
        seenLen += k;
      }
    }

    void stopRecording() {
      recording = false;
    }

    /**
     * When what the server sent so far starts a relgraph error frame rather than a TLS record,
     * the rest of that frame (read within the deadline) decoded to its message; else null.
     */
    String plainReply(long deadlineNanos) {
      try {
        byte[] head;
        synchronized (this) {
          head = Arrays.copyOf(seen, seenLen);
        }
        if (head.length < 4 || TlsFailure.looksLikeTlsRecord(head)) return null;
        long length = (head[0] & 0xffL) | (head[1] & 0xffL) << 8 | (head[2] & 0xffL) << 16
            | (head[3] & 0xffL) << 24;
        if (length < 6 || length + 4 > RECORDED_BYTES) return null;
        int whole = (int) length + 4;
        byte[] frame = Arrays.copyOf(head, whole);
        int have = head.length;
        InputStream in = getInputStream();
        while (have < whole) {
          long left = (deadlineNanos - System.nanoTime()) / 1_000_000;
          if (left <= 0) return null;
          setSoTimeout((int) Math.min(left, Integer.MAX_VALUE));
          int n = in.read(frame, have, whole - have);
          if (n < 0) return null;
          have += n;
        }
        return TlsFailure.plainFrameMessage(frame);
      } catch (IOException | RuntimeException e) {
        return null; // not a frame after all: the TLS error stands
      }
    }
  }
}
