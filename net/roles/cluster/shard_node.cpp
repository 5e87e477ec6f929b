// ShardNode's life: start, joining the cluster (again, with backoff), the map thread, stop,
// its INFO fields. The gate, the outbox, the inbox and the mover are in shard_<job>.cpp.
#include "net/roles/cluster/shard_node.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "net/roles/cluster/map_file.h"

namespace relgraph {

ShardNode::ShardNode(Db* db, ShardNodeOptions options) : db_(db), options_(std::move(options)) {}

ShardNode::~ShardNode() {
  Stop();
}

void ShardNode::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "relgraph shard %u: %s\n", options_.shard_id, line.c_str());
  }
}

bool ShardNode::Pause(std::chrono::milliseconds d, bool workers) const {
  const auto ended = [&] { return workers ? Halted() : stop_.load(); };
  for (auto until = std::chrono::steady_clock::now() + d;
       !ended() && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return !ended();
}

bool ShardNode::Backoff() {
  return Pause(options_.retry, /*workers=*/true);
}

Status ShardNode::Commit(uint64_t lsn) {
  RELGRAPH_RETURN_IF_ERROR(db_->SyncThrough(lsn));
  return options_.commit_wait ? options_.commit_wait(lsn) : Status::OK();
}

std::shared_ptr<const net::ShardMap> ShardNode::map() const {
  std::lock_guard lock(map_mu_);
  return map_;
}

void ShardNode::SetMap(net::ShardMap map, bool from_nats, bool force) {
  if (map.Find(options_.shard_id) == nullptr) {
    const auto held = this->map();
    Log("shard map version " + std::to_string(map.version) + " has no shard " +
        std::to_string(options_.shard_id) + ": kept version " +
        (held != nullptr ? std::to_string(held->version) : std::string("none")));
    return;
  }
  const uint64_t version = map.version, generation = map.generation;
  const uint64_t digest = net::ShardMapDigest(map);
  {
    std::lock_guard lock(map_mu_);
    // By (generation, version), not the revision alone: a map restored into a fresh JetStream
    // has a lower revision and a higher generation (net/cluster/placement.h).
    if (map_ != nullptr && !map.NewerThan(*map_) && !force) return;
    map_ = std::make_shared<const net::ShardMap>(std::move(map));
    // Before anything is routed here by a map that moves buckets to this shard.
    inbox_hold_ = MustHoldInbox(*map_);
  }
  map_changed_.notify_all();
  {
    std::lock_guard lock(stats_mu_);
    stats_.map_version = version;
    stats_.map_generation = generation;
    stats_.map_digest = digest;
  }
  if (from_nats && !options_.data_dir.empty()) {
    // The newest map held, whichever thread took it: a later start without NATS serves by it.
    std::lock_guard lock(save_mu_);
    const auto held = this->map();
    Env* env = options_.env != nullptr ? options_.env : Env::Posix();
    if (Status s = SaveShardMapFile(env, options_.data_dir, *held); !s.ok()) {
      Log("saving shard map version " + std::to_string(held->version) + ": " + s.ToString());
    }
  }
}

Status ShardNode::Start() {
  if (options_.shard_id == 0) return Status::InvalidArgument("a shard needs a shard id (1..65535)");
  stop_ = false;
  // Until a map names this shard's buckets, the Db asks about none (Admit refuses them all).
  db_->SetPlacement([this](UserId u) {
    const auto m = this->map();
    return m != nullptr ? PlaceOf(*m, u) : UserPlace::kHere;
  });
  const Status joined = Join();
  if (joined.ok() || joined.code() != Code::kUnavailable) {
    if (!joined.ok()) db_->SetPlacement(nullptr);
    return joined;
  }
  // NATS does not answer: serve by the map last seen, and join when NATS is back.
  const std::string saved_in = options_.data_dir.empty()
                                   ? std::string("no data directory")
                                   : JoinPath(options_.data_dir, kShardMapFileName);
  Result<net::ShardMap> saved = Status::NotFound(saved_in);
  if (!options_.data_dir.empty()) {
    saved =
        LoadShardMapFile(options_.env != nullptr ? options_.env : Env::Posix(), options_.data_dir);
  }
  if (saved.ok() && saved->Find(options_.shard_id) != nullptr) {
    const uint64_t version = saved->version;
    SetMap(std::move(*saved), /*from_nats=*/false);
    Log("cannot join the cluster yet (" + joined.ToString() +
        "): serving this shard's users by shard map version " + std::to_string(version) +
        " saved in " + saved_in +
        "; changes for other shards wait in the WAL; trying to join again with backoff");
  } else {
    const std::string why =
        saved.ok()
            ? "the map saved in " + saved_in + " has no shard " + std::to_string(options_.shard_id)
        : saved.status().code() == Code::kNotFound
            ? "this shard has never seen the shard map (no " + saved_in + ")"
            : "the saved shard map does not read (" + saved.status().ToString() + ")";
    Log("cannot join the cluster yet (" + joined.ToString() + ") and " + why +
        ": refusing every command until it joins, as it cannot tell which users are its own; "
        "trying to join again with backoff");
  }
  join_thread_ = std::thread([this] { JoinLoop(); });
  return Status::OK();
}

Status ShardNode::Join() {
  auto link = net::NatsLink::Connect(options_.nats_url, options_.names);
  if (!link.ok()) return link.status();
  auto map = (*link)->ReadMap();
  if (!map.ok()) return map.status();
  const net::ShardInfo* self = map->Find(options_.shard_id);
  if (self == nullptr) {
    return Status::InvalidArgument("the shard map (version " + std::to_string(map->version) +
                                   ") has no shard " + std::to_string(options_.shard_id));
  }
  if (self->group != options_.group) {
    const auto named = [](const std::string& g) {
      return g.empty() ? std::string("no group (one node)") : "group " + g;
    };
    return Status::InvalidArgument("the shard map (version " + std::to_string(map->version) +
                                   ") serves shard " + std::to_string(options_.shard_id) + " by " +
                                   named(self->group) + ", this node is in " +
                                   named(options_.group) + " (--group)");
  }
  if (!options_.data_dir.empty()) {
    // A JetStream store lost and a fresh map written (cluster init) while this shard was
    // down: taking it would hand this shard's moved buckets back to their old owners. It
    // waits, serving by the map it saved, for the map to be restored (import-map), whose
    // generation is higher (net/cluster/placement.h, "Which map is newer").
    auto saved =
        LoadShardMapFile(options_.env != nullptr ? options_.env : Env::Posix(), options_.data_dir);
    if (saved.ok() && saved->NewerThan(*map) &&
        net::ShardMapDigest(*saved) != net::ShardMapDigest(*map)) {
      return Status(
          Code::kUnavailable,
          "NATS holds shard map generation " + std::to_string(map->generation) + " version " +
              std::to_string(map->version) + ", older than and different from generation " +
              std::to_string(saved->generation) + " version " + std::to_string(saved->version) +
              " saved in " + JoinPath(options_.data_dir, kShardMapFileName) +
              " (was the JetStream store lost?); restore the map with relgraph-admin "
              "cluster import-map --in=THAT_FILE");
    }
  }
  RELGRAPH_RETURN_IF_ERROR(LearnMoveMarks(**link, *map));
  RELGRAPH_RETURN_IF_ERROR((*link)->EnsureStream());
  RELGRAPH_RETURN_IF_ERROR((*link)->EnsureMoveStream());
  link_ = std::move(*link);
  // NATS holds the truth, now that it holds no older map than the one saved here.
  SetMap(std::move(*map), /*from_nats=*/true, /*force=*/true);
  map_thread_ = std::thread([this] { MapLoop(); });
  std::lock_guard lock(workers_mu_);
  joined_ = true;
  if (options_.group.empty() || primary_wanted_) StartWorkersLocked();
  return Status::OK();
}

void ShardNode::StartWorkersLocked() {
  if (workers_running_ || stop_.load()) return;
  workers_stop_ = false;
  if (!options_.group.empty()) {
    // A member that becomes primary learns whether the move it takes part in was brought in
    // (by the member before it, or by itself before a restart): the inbox need not wait.
    const auto m = map();
    if (m->move && m->move->to == options_.shard_id && imported_move_.load() != m->move->id) {
      LearnMoveMarks(*link_, *m).IgnoreError();  // unread, the move thread brings it in again
    }
    std::lock_guard lock(map_mu_);
    inbox_hold_ = MustHoldInbox(*map_);
  }
  outbox_thread_ = std::thread([this] { OutboxLoop(); });
  // Known again once the inbox subscribes: what an earlier term of this member applied may
  // have been rolled back since (a member that stepped down rewinds to its new primary).
  inbox_durable_through_ = 0;
  inbox_thread_ = std::thread([this] { InboxLoop(); });
  move_thread_ = std::thread([this] { MoveLoop(); });
  workers_running_ = true;
}

void ShardNode::StopWorkersLocked() {
  if (!workers_running_) return;
  {
    std::lock_guard lock(map_mu_);
    workers_stop_ = true;
  }
  map_changed_.notify_all();
  for (std::thread* t : {&outbox_thread_, &inbox_thread_, &move_thread_}) {
    if (t->joinable()) t->join();
  }
  inbox_held_ = false;
  workers_running_ = false;
}

void ShardNode::SetPrimary(bool primary) {
  if (options_.group.empty()) return;
  std::lock_guard lock(workers_mu_);
  primary_wanted_ = primary;
  if (!joined_.load()) return;  // Join starts them
  if (primary) {
    StartWorkersLocked();
    Log("primary of group " + options_.group + ": the outbox, inbox and mover run here");
  } else if (workers_running_) {
    StopWorkersLocked();
    Log("no longer the primary of group " + options_.group +
        ": the outbox, inbox and mover stopped here");
  }
}

void ShardNode::JoinLoop() {
  std::chrono::milliseconds wait = options_.retry;
  std::string last;
  while (!stop_.load()) {
    if (!Pause(wait, /*workers=*/false)) return;
    const Status s = Join();
    if (s.ok()) {
      const auto m = map();
      Log("joined the cluster at " + options_.nats_url + " (shard map version " +
          std::to_string(m->version) + ")");
      return;
    }
    if (s.ToString() != last) {  // once per new reason, not once per try
      Log("joining the cluster at " + options_.nats_url + ": " + s.ToString() +
          "; trying again with backoff");
      last = s.ToString();
    }
    wait = std::min(wait * 2, options_.join_retry_max);
  }
}

void ShardNode::Stop() {
  {
    std::lock_guard lock(map_mu_);
    stop_ = true;
  }
  map_changed_.notify_all();
  // The join thread first: once it is done, no other thread starts.
  if (join_thread_.joinable()) join_thread_.join();
  {
    std::lock_guard lock(workers_mu_);
    StopWorkersLocked();
  }
  if (map_thread_.joinable()) map_thread_.join();
  db_->SetPlacement(nullptr);
}

Result<std::string> ShardNode::MapText() const {
  const auto m = map();
  if (m == nullptr) {
    return Status(Code::kUnavailable, "shard " + std::to_string(options_.shard_id) +
                                          " has not seen the shard map yet (not joined)");
  }
  return net::EncodeVersionedShardMap(*m);
}

ShardNode::Stats ShardNode::stats() const {
  std::lock_guard lock(stats_mu_);
  return stats_;
}

void ShardNode::AddInfo(std::vector<net::InfoField>* fields) const {
  const Stats s = stats();
  auto add = [fields](const char* name, uint64_t value) { fields->push_back({name, value}); };
  add("cluster_shard_id", options_.shard_id);
  add("cluster_joined", joined_.load() ? 1 : 0);
  add("cluster_active", workers_running_.load() ? 1 : 0);
  add("cluster_map_version", s.map_version);
  add("cluster_map_generation", s.map_generation);
  add("cluster_map_digest", s.map_digest);
  add("cluster_forwarded_lsn", s.forwarded_lsn);
  add("cluster_messages_sent", s.messages_sent);
  add("cluster_records_sent", s.records_sent);
  add("cluster_messages_applied", s.messages_applied);
  add("cluster_records_applied", s.records_applied);
  add("cluster_records_skipped", s.records_skipped);
  add("cluster_messages_rejected", s.messages_rejected);
  add("cluster_messages_filled", s.messages_filled);
  add("cluster_post_conflicts", s.post_conflicts);
  auto pending = InboundPending();
  // All ones: JetStream did not answer, so the pending count is unknown.
  add("cluster_inbound_pending", pending.ok() ? *pending : UINT64_MAX);
  add("cluster_inbound_delay_ms", s.inbound_delay_ms);
  add("cluster_outbox_map_version", s.outbox_map_version);
  add("cluster_outbox_map_generation", s.outbox_map_generation);
  add("cluster_inbox_held", inbox_held_.load() ? 1 : 0);
  add("cluster_moves_exported", s.moves_exported);
  add("cluster_moves_imported", s.moves_imported);
  add("cluster_foreign_dropped", s.foreign_dropped);
}

void ShardNode::MapLoop() {
  while (!stop_.load()) {
    Status s = link_->WatchMap(
        stop_, [this](net::ShardMap m) { SetMap(std::move(m)); }, 200, 2000,
        [this](const std::string& why) { Log(why); });
    if (stop_.load()) break;
    if (s.ok()) continue;  // it read a revision the watch had missed: watch again
    Log("watching the shard map: " + s.ToString() + "; again shortly");
    Pause(options_.retry, /*workers=*/false);
  }
}

}  // namespace relgraph
