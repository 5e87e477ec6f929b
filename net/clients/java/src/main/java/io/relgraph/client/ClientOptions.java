package io.relgraph.client;

import java.time.Duration;

/**
 * How a {@link RelgraphClient} connects, times out and retries. Immutable; start from
 * {@link #to(String)} and change with the with-methods.
 *
 * @param address       HOST:PORT of the server (a replica's read_only replies may move it)
 * @param token         sent in HELLO (a server without --auth-token ignores it)
 * @param poolSize      connections the client keeps (each carries any number of requests)
 * @param connectTimeout bounds one connect + TLS handshake (with TLS) + HELLO
 * @param callTimeout   bounds a call and its retries (the futures complete with TIMEOUT)
 * @param maxRetries    attempts after the first for a retryable failure
 * @param backoffMin    the first pause between attempts or dials, doubling up to backoffMax
 * @param backoffMax    the longest pause
 * @param redirect      follow read_only to the primary it names (retry-safe writes only)
 * @param tls           TLS on every connection the client makes (off: plain TCP); the
 *                      handshake runs after the TCP connect, before HELLO, within
 *                      connectTimeout
 */
public record ClientOptions(String address, String token, int poolSize, Duration connectTimeout,
    Duration callTimeout, int maxRetries, Duration backoffMin, Duration backoffMax,
    boolean redirect, TlsOptions tls) {

  public ClientOptions {
    if (tls == null) tls = TlsOptions.off();
  }

  public static ClientOptions to(String address) {
    return new ClientOptions(address, "", 2, Duration.ofSeconds(5), Duration.ofSeconds(30), 5,
        Duration.ofMillis(50), Duration.ofSeconds(2), true, TlsOptions.off());
  }

  public ClientOptions withToken(String token) {
    return new ClientOptions(address, token, poolSize, connectTimeout, callTimeout, maxRetries,
        backoffMin, backoffMax, redirect, tls);
  }

  public ClientOptions withPoolSize(int poolSize) {
    return new ClientOptions(address, token, poolSize, connectTimeout, callTimeout, maxRetries,
        backoffMin, backoffMax, redirect, tls);
  }

  public ClientOptions withConnectTimeout(Duration d) {
    return new ClientOptions(address, token, poolSize, d, callTimeout, maxRetries, backoffMin,
        backoffMax, redirect, tls);
  }

  public ClientOptions withCallTimeout(Duration d) {
    return new ClientOptions(address, token, poolSize, connectTimeout, d, maxRetries, backoffMin,
        backoffMax, redirect, tls);
  }

  public ClientOptions withMaxRetries(int n) {
    return new ClientOptions(address, token, poolSize, connectTimeout, callTimeout, n, backoffMin,
        backoffMax, redirect, tls);
  }

  public ClientOptions withBackoff(Duration min, Duration max) {
    return new ClientOptions(address, token, poolSize, connectTimeout, callTimeout, maxRetries, min,
        max, redirect, tls);
  }

  public ClientOptions withRedirect(boolean on) {
    return new ClientOptions(address, token, poolSize, connectTimeout, callTimeout, maxRetries,
        backoffMin, backoffMax, on, tls);
  }

  /** TLS on every connection (docs/security.md): {@code TlsOptions.caFile(path)}, ... */
  public ClientOptions withTls(TlsOptions t) {
    return new ClientOptions(address, token, poolSize, connectTimeout, callTimeout, maxRetries,
        backoffMin, backoffMax, redirect, t);
  }

  /** TLS with the application's own context: {@code withTls(TlsOptions.context(c))}. */
  public ClientOptions withSslContext(javax.net.ssl.SSLContext c) {
    return withTls(TlsOptions.context(c));
  }

  /** The pause before attempt (or dial) number {@code n} (1-based), with jitter in [d/2, d]. */
  long backoffNanos(int n) {
    long min = backoffMin.toNanos();
    long d = Math.min(backoffMax.toNanos(), min << Math.min(n - 1, 20));
    return d / 2 + (long) (Math.random() * (d / 2 + 1));
  }

  static java.net.InetSocketAddress parse(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    if (colon <= 0) throw new IllegalArgumentException("not HOST:PORT: " + hostPort);
    String host = hostPort.substring(0, colon);
    if (host.startsWith("[") && host.endsWith("]")) host = host.substring(1, host.length() - 1);
    return new java.net.InetSocketAddress(host, Integer.parseInt(hostPort.substring(colon + 1)));
  }
}
