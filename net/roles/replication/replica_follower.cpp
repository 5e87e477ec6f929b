#include "net/roles/replication/replica_follower.h"

#include <algorithm>
#include <vector>

#include "net/roles/replication/diverged_tail.h"
#include "storage/env/file_names.h"

namespace relgraph {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(10);  // how soon Stop is noticed (a promotion waits for it)
// How often a streaming replica reads its primary's REPLICATION again (the group's
// sync_replicas and the other replicas' addresses), and how long it gives each such call.
constexpr auto kGroupPoll = std::chrono::milliseconds(2000);
constexpr auto kPeerTimeout = std::chrono::milliseconds(1000);

}  // namespace

ReplicaFollower::ReplicaFollower(Db* db, Replication* replication, FollowerOptions options)
    : db_(db), replication_(replication), options_(std::move(options)), resync_(options_.resync) {}

ReplicaFollower::~ReplicaFollower() {
  Stop();
}

void ReplicaFollower::Start() {
  replication_->SetPromotionCheck([this] { return CheckNoPeerAhead(); });
  thread_ = std::thread([this] { Loop(); });
}

Status ReplicaFollower::LearnGroup(net::Client& primary) {
  auto r = primary.Replication();
  if (!r.ok()) return r.status();
  replication_->LearnGroupSyncReplicas(r->sync_replicas);
  std::vector<std::string> peers;
  for (const net::ReplicaEntry& e : r->replicas) {
    if (e.name != options_.name) peers.push_back(e.name);
  }
  std::sort(peers.begin(), peers.end());
  peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
  replication_->SetPeers(std::move(peers));
  return Status::OK();
}

void ReplicaFollower::PollGroup() {
  net::ClientOptions o = options_.primary;
  o.connect_timeout = kPeerTimeout;
  o.io_timeout = kPeerTimeout;
  auto c = net::Client::Connect(o);
  if (c.ok()) LearnGroup(**c).IgnoreError();  // the next poll tries again
}

Status ReplicaFollower::CheckNoPeerAhead() const {
  const uint64_t own = db_->last_lsn();
  for (const std::string& peer : replication_->peers()) {
    net::ClientOptions o = options_.primary;  // same token: one group, one secret
    if (!net::ParseHostPort(peer, &o.host, &o.port).ok()) continue;
    o.connect_timeout = kPeerTimeout;
    o.io_timeout = kPeerTimeout;
    auto c = net::Client::Connect(o);
    if (!c.ok()) continue;  // unreachable: it cannot take writes from clients either
    auto r = (*c)->Replication();
    if (!r.ok()) continue;
    if (r->role == net::ReplicationRole::kPrimary && r->epoch > db_->epoch().number) {
      return Status::InvalidArgument("replica " + peer + " is already a primary (epoch " +
                                     std::to_string(r->epoch) +
                                     "): point this node at it instead, or promote --force");
    }
    if (r->applied_lsn > own) {
      return Status::InvalidArgument(
          "replica " + peer + " holds LSN " + std::to_string(r->applied_lsn) +
          ", newer than this node's " + std::to_string(own) +
          ": promote it instead (it may hold acknowledged writes this node lacks), or promote "
          "--force");
    }
  }
  return Status::OK();
}

void ReplicaFollower::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool ReplicaFollower::Sleep(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  return !wake_.wait_for(lock, d, [&] { return stop_; });
}

void ReplicaFollower::Report(const std::string& state, const std::string& message) {
  Replication::Link link;
  link.state = state;
  link.message = message;
  link.primary_lsn = primary_lsn_;
  link.last_frame = last_frame_;
  replication_->SetLink(link);
  const std::string line = message.empty() ? state : state + ": " + message;
  if (options_.log && line != last_logged_ && state != "connecting") options_.log(line);
  if (state != "connecting") last_logged_ = line;
}

void ReplicaFollower::Loop() {
  auto backoff = options_.min_backoff;
  while (Sleep(std::chrono::milliseconds(0))) {
    const uint64_t before = db_->last_lsn();
    const Status s = FollowOnce();
    if (!Sleep(std::chrono::milliseconds(0))) break;
    if (halted_) {
      // Refuse to follow until an operator decides (restart with --resync, or promote).
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stop_; });
      break;
    }
    if (resync_) continue;  // lsn_expired: start over from the snapshot at once
    if (db_->last_lsn() != before) backoff = options_.min_backoff;  // it was streaming
    Report("connecting", s.ToString());
    if (!Sleep(backoff)) break;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

Status ReplicaFollower::Resync(net::Client& client) {
  Report("snapshot", "copying the primary's snapshot (this node's data is replaced)");
  const std::string path = JoinPath(db_->dir(), "resync-snapshot.part");
  auto fetched = client.FetchSnapshot(path);
  if (!fetched.ok() && fetched.status().code() != Code::kNotFound) return fetched.status();
  // No snapshot on the primary: its WAL still starts at LSN 1, so start from nothing.
  return db_->ResetToSnapshot(fetched.ok() ? path : std::string());
}

Status ReplicaFollower::SaveDiverged(const Status& diverged) {
  // The first LSN the primary never had; when it cannot say, this node's current epoch is
  // the part it does not know.
  uint64_t from =
      diverged.detail() > 0 ? static_cast<uint64_t>(diverged.detail()) : db_->epoch().first_lsn;
  auto saved = SaveDivergedTail(db_, from);
  if (!saved.ok()) return saved.status();
  if (options_.log) {
    options_.log(saved->records == 0
                     ? "diverged: " + diverged.message() + "; no records to save, resynchronizing"
                     : "diverged: " + diverged.message() + "; saved LSNs " +
                           std::to_string(saved->from_lsn) + ".." + std::to_string(saved->to_lsn) +
                           " (" + std::to_string(saved->records) + " records) to " + saved->path +
                           ", resynchronizing from the primary");
  }
  return Status::OK();
}

Status ReplicaFollower::FollowOnce() {
  Report("connecting", "");
  auto client = net::Client::Connect(options_.primary);
  if (!client.ok()) return client.status();
  if (resync_) {
    RELGRAPH_RETURN_IF_ERROR(Resync(**client));
    resync_ = false;
  }
  RELGRAPH_RETURN_IF_ERROR(LearnGroup(**client));
  const Epoch epoch = db_->epoch();
  net::ReplicateRequest request{db_->last_lsn() + 1, epoch.number, epoch.id, options_.name};
  auto started = (*client)->StartReplication(request);
  if (!started.ok()) {
    if (started.status().code() == Code::kLsnExpired) resync_ = true;
    if (started.status().code() == Code::kDiverged && options_.resync_when_diverged) {
      if (Status saved = SaveDiverged(started.status()); !saved.ok()) {
        halted_ = true;
        Report("diverged", started.status().message() + "; its records could not be saved aside (" +
                               saved.ToString() + "), so they are kept: resolve by hand");
        return saved;
      }
      resync_ = true;
      return started.status();
    }
    if (started.status().code() == Code::kDiverged) {
      halted_ = true;
      Report("diverged", started.status().message() +
                             "; restart this replica with --resync to discard those records "
                             "and copy the primary, or promote it");
    }
    return started.status();
  }
  primary_lsn_ = std::max(primary_lsn_, started->newest_lsn);
  last_frame_ = std::chrono::steady_clock::now();
  Report("streaming", "");
  std::vector<Db::ReplicatedRecord> batch;
  auto last_frame = std::chrono::steady_clock::now();
  auto last_poll = last_frame;
  while (Sleep(std::chrono::milliseconds(0))) {
    if (std::chrono::steady_clock::now() - last_poll >= kGroupPoll) {
      PollGroup();
      last_poll = std::chrono::steady_clock::now();
    }
    auto frame = (*client)->NextPush(kPoll);
    if (!frame.ok() && frame.status().code() == Code::kTimeout) {
      if (std::chrono::steady_clock::now() - last_frame < options_.silence_timeout) continue;
      return Status(Code::kTimeout, "no frame from the primary for " +
                                        std::to_string(options_.silence_timeout.count()) + " ms");
    }
    if (!frame.ok()) return frame.status();
    last_frame = std::chrono::steady_clock::now();
    last_frame_ = last_frame;
    if (!frame->status.ok()) {  // the stream ended on the primary's side
      if (frame->status.code() == Code::kLsnExpired) resync_ = true;
      return frame->status;
    }
    net::RecordsBody header;
    batch.clear();
    RELGRAPH_RETURN_IF_ERROR(net::ForEachWireRecord(
        frame->body, &header, [&](uint64_t lsn, uint8_t type, std::string_view payload) {
          batch.push_back({lsn, type, payload});
          return Status::OK();
        }));
    if (!batch.empty()) {
      uint64_t commit = 0;
      Status s = db_->ApplyReplicated(batch, &commit);
      if (s.ok() && commit != 0) s = db_->WaitDurable(commit);
      if (!s.ok()) {
        halted_ = true;
        Report("failed", s.ToString() + "; restart this replica with --resync");
        return s;
      }
    }
    primary_lsn_ = std::max(primary_lsn_, header.newest_lsn);
    const uint64_t applied = db_->last_lsn();
    Replication::Link link;
    link.state = "streaming";
    link.primary_lsn = primary_lsn_;
    link.last_frame = last_frame;
    link.lag_ms = applied >= primary_lsn_
                      ? 0
                      : static_cast<uint64_t>(
                            std::max<int64_t>(0, net::RecordsClockUs() - header.sent_us) / 1000);
    replication_->SetLink(link);
    auto acked =
        (*client)->Call(net::ReplicaAckRequest{options_.name, applied, db_->durable_lsn()});
    if (!acked.ok()) return acked.status();
  }
  return Status::OK();
}

}  // namespace relgraph
