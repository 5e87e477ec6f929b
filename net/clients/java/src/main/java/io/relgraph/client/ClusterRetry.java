package io.relgraph.client;

/**
 * What a {@link ClusterClient} does after a routed attempt failed (docs/cluster.md, "Clients
 * without NATS" and "Shard replicas"), as net/cluster/cluster_client.h's Routed decides it. Pure
 * functions; thread-safe.
 */
final class ClusterRetry {
  private ClusterRetry() {}

  enum Step {
    /** Return the error. */
    FAIL,
    /** The shard's map names another owner: read the map again (the refusing shard first), retry. */
    REFRESH_MAP,
    /** The owner is taking the bucket over: retry the same shard a little later. */
    WAIT_MOVING,
    /** A group's member is not (or no longer) its primary: find the primary, retry. */
    FIND_PRIMARY,
    /** The connection failed before the request could have been carried out, or it is retry-safe: retry after a backoff. */
    RECONNECT,
  }

  /** The step after {@code e} answered {@code op} sent to a shard ({@code grouped}: served by a group). */
  static Step next(Opcode op, RelgraphException e, boolean grouped) {
    if (e instanceof ConnectionException ce) {
      if (ce.sent() && !op.retrySafe()) return Step.FAIL; // its outcome is unknown
      return grouped ? Step.FIND_PRIMARY : Step.RECONNECT;
    }
    switch (e.code()) {
      case MOVED:
        return Step.REFRESH_MAP;
      case MOVING:
        return Step.WAIT_MOVING;
      case READ_ONLY: // a replica refused it: not carried out
        return grouped ? Step.FIND_PRIMARY : Step.FAIL;
      case UNAVAILABLE:
        // A primary that stepped down before the write was acknowledged: its outcome is unknown.
        if (grouped && e.serverMessage().contains("outcome is unknown")) {
          return op.retrySafe() ? Step.FIND_PRIMARY : Step.FAIL;
        }
        return Step.FAIL;
      default:
        return Step.FAIL;
    }
  }
}
