package io.relgraph.client;

import java.time.Duration;
import java.util.List;

/**
 * How a {@link ClusterClient} finds the cluster and retries. Immutable; start from
 * {@link #seeds(String...)} and change with the with-methods.
 *
 * @param seeds          HOST:PORT of shards (or members of a shard's group) asked for the map
 *                       (SHARD_MAP) at connect, and again when the shards asked later fail
 * @param client         token, TLS, pool size, connect timeout, backoff and {@code callTimeout} for
 *                       every shard (its address is the map's); callTimeout bounds a call with
 *                       every redirect, wait and retry
 * @param maxRedirects   {@code moved} answers followed per call (to a new owner) before giving up
 * @param movingWait     how long a call about a user whose bucket is moving is retried
 *                       ({@code moving}, or {@code moved} from the shard the newest map names)
 * @param failoverTimeout how long a call to a shard served by a group waits for a primary
 */
public record ClusterOptions(List<String> seeds, ClientOptions client, int maxRedirects,
    Duration movingWait, Duration failoverTimeout) {

  public static ClusterOptions seeds(String... seeds) {
    if (seeds.length == 0) throw new IllegalArgumentException("a cluster client needs a seed address");
    return new ClusterOptions(List.of(seeds), ClientOptions.to(seeds[0]), 3, Duration.ofSeconds(30),
        Duration.ofSeconds(10));
  }

  /** Token, TLS, timeouts, pool size and backoff for every shard (the address given is ignored). */
  public ClusterOptions withClient(ClientOptions c) {
    return new ClusterOptions(seeds, c, maxRedirects, movingWait, failoverTimeout);
  }

  public ClusterOptions withToken(String token) {
    return withClient(client.withToken(token));
  }

  /** TLS on every shard connection (docs/security.md); the seeds' and the map's addresses alike. */
  public ClusterOptions withTls(TlsOptions tls) {
    return withClient(client.withTls(tls));
  }

  /** TLS with the application's own context on every shard connection. */
  public ClusterOptions withSslContext(javax.net.ssl.SSLContext c) {
    return withClient(client.withSslContext(c));
  }

  public ClusterOptions withCallTimeout(Duration d) {
    return withClient(client.withCallTimeout(d));
  }

  public ClusterOptions withMaxRedirects(int n) {
    return new ClusterOptions(seeds, client, n, movingWait, failoverTimeout);
  }

  public ClusterOptions withMovingWait(Duration d) {
    return new ClusterOptions(seeds, client, maxRedirects, d, failoverTimeout);
  }

  public ClusterOptions withFailoverTimeout(Duration d) {
    return new ClusterOptions(seeds, client, maxRedirects, movingWait, d);
  }

  /**
   * The options of the client of one shard node: the template's, at {@code address}, without
   * retries or read_only redirects of its own (the cluster client decides those).
   */
  ClientOptions forNode(String address) {
    return new ClientOptions(address, client.token(), client.poolSize(), client.connectTimeout(),
        client.callTimeout(), 0, client.backoffMin(), client.backoffMax(), false, client.tls());
  }
}
