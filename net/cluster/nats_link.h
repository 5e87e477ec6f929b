// NatsLink: one connection to NATS JetStream, as every node and router of a cluster holds one
// (docs/cluster.md): the shard map in a JetStream key-value bucket (read, created, replaced
// by compare-and-set, watched), and the cluster's stream, on which each shard receives the
// changes other shards send it.
//
// Why a broker and not our own links: JetStream already keeps messages durably, in order,
// per subject, redelivers what a consumer did not acknowledge and drops duplicate message
// ids; a key-value bucket gives the map a revision that only goes up and a watch. relgraph
// adds only what it must: which shard a change goes to, and applying it exactly once
// (engine/db.h, ApplyRemote).
//
// Thread-safety: the NATS C client is thread-safe; a NatsLink may be used from several
// threads, but WatchMap blocks its caller.
#pragma once

#include <nats/nats.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/cluster/placement.h"
#include "storage/status.h"

namespace relgraph::net {

// The names a cluster's nodes agree on (all the same across one cluster).
struct ClusterNames {
  std::string kv_bucket = "relgraph_cluster";  // the key-value bucket holding the map
  std::string map_key = "shard_map";
  std::string stream = "RELGRAPH_CLUSTER";             // carries changes between shards
  std::string subject_prefix = "relgraph_cluster";     // shard N receives on PREFIX.shard.N
  std::string move_stream = "RELGRAPH_CLUSTER_MOVES";  // bucket moves' state, PREFIX.move.<id>
};

// A durable consumer's position, from JetStream.
struct ConsumerState {
  uint64_t ack_floor = 0;    // the stream sequence up to which every message is acknowledged
  uint64_t pending = 0;      // messages not delivered yet
  uint64_t ack_pending = 0;  // delivered, not acknowledged
};

// kUnavailable: `what` failed with the NATS status (and JetStream's error code when set),
// plus the client's last error text.
Status NatsError(const std::string& what, natsStatus s, jsErrCode jerr = static_cast<jsErrCode>(0));

// Whether a key-value write just failed because the key's revision was not the expected one
// (it exists, for a create; another writer moved it, for an update).
bool WrongRevision(natsStatus s);

// The servers of `urls`, a comma-separated list ("nats://a:4222,nats://b:4222"; spaces
// around the commas ignored), each of which must start with nats://. kInvalidArgument naming
// the bad item. Every `--cluster`/`--nats` flag takes such a list: one NATS node, or several
// of one NATS cluster (docs/cluster.md, "Three NATS nodes").
Result<std::vector<std::string>> ParseNatsServers(const std::string& urls);
// Connects to one of `urls` (ParseNatsServers), and reconnects by itself to any of them (and
// to the servers they announce) forever, every 200 ms. A server that stops answering without
// closing the connection (hung, partitioned) is left after kNatsMaxPingsOut pings sent every
// kNatsPingIntervalMs went unanswered (2 to 3 s). kInvalidArgument for a bad list,
// kUnavailable when none answers.
inline constexpr int64_t kNatsPingIntervalMs = 1000;
inline constexpr int kNatsMaxPingsOut = 2;
Result<natsConnection*> ConnectNats(const std::string& urls);

// NATS's own TLS (docs/security.md), for every NATS connection this process opens from now on:
// the CAs the servers' certificates are checked against (empty: the system's) and a client
// certificate for a NATS server that wants one. TLS is on when any file is given or a URL is
// tls://HOST:PORT. Set once at start by each program from its --nats-tls-* flags.
struct NatsTlsOptions {
  std::string ca_file, cert_file, key_file;
  bool enabled() const { return !ca_file.empty() || !cert_file.empty(); }
};
void SetNatsTls(const NatsTlsOptions& options);
// "--nats-tls-ca=FILE", "--nats-tls-cert=FILE", "--nats-tls-key=FILE": applies `arg` to
// *options and returns true; false for any other argument; kInvalidArgument without a value.
Result<bool> ApplyNatsTlsFlag(std::string_view arg, NatsTlsOptions* options);
inline constexpr char kNatsTlsFlagsHelp[] =
    "  --nats-tls-ca=FILE     NATS over TLS, its servers checked against these CAs\n"
    "  --nats-tls-cert=FILE   client certificate for NATS (mutual TLS), with\n"
    "  --nats-tls-key=FILE    its key\n";

// Creates the stream `name` on `subjects` (file storage, a 2-minute duplicate window,
// `replicas` copies on as many NATS nodes) unless it exists; another node creating it
// meanwhile is fine. relgraph-bridge's stream and a cluster's are made so.
Status EnsureJetStreamStream(jsCtx* js, const std::string& name, const std::string& subjects,
                             int replicas = 1);

// A key's newest value in a key-value bucket, and its revision.
struct KvValue {
  std::string value;
  uint64_t revision = 0;
};
// The newest value of `key` in key-value bucket `bucket`, read from the leader of the
// bucket's stream; nullopt when the key has none (never put, or deleted or purged). `what`
// names the read in an error (kUnavailable).
//
// Why not kvStore_Get: the client makes buckets that allow direct gets, and a direct get is
// answered by any replica, also one that has not yet stored a put the leader acknowledged.
// On three NATS nodes a shard started right after `cluster init` could read "no shard map"
// and exit; a lease read could miss the newest lease. The leader has applied every put it
// acknowledged.
Result<std::optional<KvValue>> ReadKvFromLeader(jsCtx* js, const std::string& bucket,
                                                const std::string& key, const std::string& what);

class NatsLink {
 public:
  // Connects (and reconnects by itself later) to `urls`, one server or a comma-separated list
  // (ConnectNats). kUnavailable when NATS is unreachable or has no JetStream; kInvalidArgument
  // for a bad list.
  static Result<std::unique_ptr<NatsLink>> Connect(const std::string& urls,
                                                   const ClusterNames& names = {});
  ~NatsLink();
  NatsLink(const NatsLink&) = delete;
  NatsLink& operator=(const NatsLink&) = delete;

  // The current map, its version the key's revision. kNotFound when none was created.
  Result<ShardMap> ReadMap();
  // Stores the first map; returns its version. kAlreadyExists when a map exists. Creates the
  // key-value bucket when absent, with `replicas` copies (1 to 5; 3 on a three-node NATS
  // cluster): the cluster's replica count, which every stream created later takes
  // (Replicas).
  Result<uint64_t> CreateMap(const ShardMap& map, int replicas = 1);
  // Replaces the map if it is still at `expected_version`; returns the new version.
  // kAlreadyExists when another writer changed it meanwhile (read it again).
  Result<uint64_t> ReplaceMap(const ShardMap& map, uint64_t expected_version);
  // Calls fn with the current map (when there is one) and then each new version, until
  // `stop` is set (checked every `poll_ms`) or the watch fails (then it returns the error). A
  // stored map that does not parse is skipped and said to `on_skip` (stderr without one). Every
  // `check_ms` the key is also read: a revision the watch did not deliver (the store was lost and
  // the map restored, at a lower revision) is handed to fn, and WatchMap returns OK, to be called
  // again (the watch does not recover from a lost store by itself).
  Status WatchMap(const std::atomic<bool>& stop, const std::function<void(ShardMap)>& fn,
                  int poll_ms = 200, int check_ms = 2000,
                  const std::function<void(const std::string&)>& on_skip = nullptr);

  // The cluster's replica count: how many copies the key-value bucket holding the map has
  // (set when `relgraph-admin cluster init` or `import-map` created it). kNotFound without
  // the bucket.
  Result<int> Replicas();
  // Creates the cluster's stream (file storage, subjects PREFIX.shard.*, a 2-minute duplicate
  // window, Replicas() copies) unless it exists.
  Status EnsureStream();
  // Publishes `data` on `subject` with the message id `msg_id` (JetStream drops a repeated
  // id within the stream's duplicate window) and waits up to 5 s for JetStream's
  // acknowledgement. kUnavailable naming `what` when it did not come.
  Status Publish(const std::string& subject, std::string_view data, const std::string& msg_id,
                 const std::string& what);
  std::string SubjectOf(uint32_t shard) const;   // PREFIX.shard.<id>
  std::string ConsumerOf(uint32_t shard) const;  // shard_<id>: its durable consumer
  // The position of shard `shard`'s inbound consumer; kNotFound when it has none yet.
  Result<ConsumerState> ConsumerStateOf(uint32_t shard);
  // The sequence of the newest message in the cluster's stream (0: none).
  Result<uint64_t> StreamLastSequence();
  // The stream sequence of the newest message on shard `shard`'s subject (0: none), as the
  // stream's leader holds it (not a replica that may lag).
  Result<uint64_t> LastSequenceOf(uint32_t shard);

  // Bucket moves (docs/cluster.md, "Moving buckets online"): the stream carrying their state
  // (file storage, subjects PREFIX.move.*, Replicas() copies), created unless it exists; the
  // subject of move `id`; the key-value marks the new owner sets: once it brought the state in
  // (kStateIn), and once it also applied what other shards had sent it before (kDone: it
  // answers the moving users' commands; the tool ends the move on this one).
  enum class MoveMark { kStateIn, kDone };
  Status EnsureMoveStream();
  std::string MoveSubjectOf(uint64_t id) const;  // PREFIX.move.<id>
  Status MarkMove(uint64_t id, MoveMark mark);
  Result<bool> MoveMarked(uint64_t id, MoveMark mark);
  Status MarkMoveDone(uint64_t id) { return MarkMove(id, MoveMark::kDone); }
  Result<bool> MoveDone(uint64_t id) { return MoveMarked(id, MoveMark::kDone); }
  // Deletes move `id`'s state and its marks (after the move line went).
  Status ForgetMove(uint64_t id);
  const ClusterNames& names() const { return names_; }
  natsConnection* connection() { return nc_; }
  jsCtx* js() { return js_; }

 private:
  NatsLink(ClusterNames names) : names_(std::move(names)) {}
  // kv_ bound to the bucket, created with `replicas` copies when `create`.
  Status BindKv(bool create, int replicas = 1);

  ClusterNames names_;
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  kvStore* kv_ = nullptr;
};

}  // namespace relgraph::net
