package io.relgraph.client;
import java.util.List;
/** REPLICATION's reply: role (0 primary, 1 replica), its primary, the link's state and message, epoch, positions, lag, the group's sync_replicas and the replicas streaming from this node. */
public record Replication(int role, String primary, String state, String message, long epoch, long epochId, long appliedLsn, long primaryLsn, long lagMs, long syncReplicas, List<ReplicaInfo> replicas) {}
