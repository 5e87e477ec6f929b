#include "engine/db.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <utility>

#include "engine/durable/feed_snapshot.h"
#include "engine/durable/graph_image_loader.h"
#include "engine/durable/graph_snapshot.h"
#include "engine/graph/clock.h"
#include "storage/env/file_names.h"
#include "storage/wal/wal_reader.h"
#include "storage/wal/wal_tail.h"

namespace relgraph {
namespace {

// Between two holds of the exclusive lock by work in steps (an operation's steps, the id
// index's growth): the lock left free for those it woke (DbOptions::step_gap_us).
void LeaveLockFree(const DbOptions& options) {
  if (options.step_gap_us > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(options.step_gap_us));
  }
}

// A new user's share of the id index's growth when the background worker moves the rest
// (GraphOptions::id_growth_step): ~1.3 us of moves, 1/16 of the default's, while it still
// ends a growth by new users alone should the worker fall behind (within ~2.4M new users at
// 155M users, where the default takes ~150k).
constexpr uint32_t kIdGrowthStepBesideWorker = 64;

DbOptions WithIdGrowthStep(DbOptions options) {
  if (options.background_id_growth && options.graph.id_growth_step == 0) {
    options.graph.id_growth_step = kIdGrowthStepBesideWorker;
  }
  return options;
}

}  // namespace

Db::Db(std::string dir, const DbOptions& options)
    : dir_(std::move(dir)),
      options_(WithIdGrowthStep(options)),
      env_(options_.env != nullptr ? options_.env : Env::Posix()),
      graph_(std::make_unique<Graph>(options_.graph)),
      feed_(std::make_unique<Feed>(options_.feed, options_.graph.clock)) {}

Db::~Db() {
  Close().IgnoreError();
}

Result<std::unique_ptr<Db>> Db::Open(const std::string& dir, const DbOptions& options) {
  RELGRAPH_RETURN_IF_ERROR(ValidateGraphOptions(options.graph));
  RELGRAPH_RETURN_IF_ERROR(ValidateFeedOptions(options.feed));
  std::unique_ptr<Db> db(new Db(dir, options));
  if (!dir.empty()) RELGRAPH_RETURN_IF_ERROR(db->Recover());
  if (options.background_fanout) {
    db->fanout_.Start([raw = db.get()] { return raw->RunFanoutBatch(); }, options.fanout_gather_us);
  }
  if (options.background_id_growth) {
    db->id_growth_.Start([raw = db.get()] { return raw->RunIdGrowthHold(); }, /*gather_us=*/0);
    std::unique_lock lock(db->mu_);
    db->WakeIdGrowthLocked();  // recovery may have left it growing
  }
  return db;
}

// ---- the id index's growth ---------------------------------------------------------------------

void Db::WakeIdGrowthLocked() {
  if (options_.background_id_growth && graph_->id_index_growing()) id_growth_.Wake();
}

bool Db::RunIdGrowthHold() {
  LeaveLockFree(options_);
  std::unique_lock lock(mu_);
  if (closed_) return false;
  // Short holds: no caller waits for the growth, while every reader and writer may wait for a
  // hold. Four steps (~85 us at 40M users) with the 0.2 ms gaps finish 155M in ~12 s.
  constexpr int kStepsPerHold = 4;
  const auto start = std::chrono::steady_clock::now();
  const auto hold = std::chrono::microseconds(options_.step_hold_us);
  for (int step = 0; step < kStepsPerHold; ++step) {
    if (!graph_->GrowIdIndex(IdMap::kGrowthStep)) return false;
    if (std::chrono::steady_clock::now() - start >= hold) break;
  }
  return true;
}

// ---- background fan-out -----------------------------------------------------------------------

void Db::WakeFanout() {
  fanout_.Wake();
}

bool Db::RunFanoutBatch() {
  std::vector<double> delays;
  bool more;
  {
    std::shared_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    feed_->RunFanout(*graph_);
    more = feed_->fanout_pending();
    delays = feed_->TakeFanoutDelays();
  }
  if (!delays.empty()) {
    std::lock_guard lock(delays_mu_);
    // Keep a bounded window of recent delays for reports.
    if (fanout_delays_.size() > (1u << 20)) fanout_delays_.clear();
    fanout_delays_.insert(fanout_delays_.end(), delays.begin(), delays.end());
  }
  return more;
}

void Db::CompactFeedPools() {
  {
    std::shared_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    feed_->BeginPoolCompaction();
  }
  if (options_.background_fanout) WakeFanout();
}

void Db::DrainFanout() {
  while (RunFanoutBatch()) {
  }
}

std::vector<double> Db::TakeFanoutDelays() {
  std::lock_guard lock(delays_mu_);
  std::vector<double> out;
  out.swap(fanout_delays_);
  return out;
}

Status Db::Recover() {
  RELGRAPH_RETURN_IF_ERROR(env_->CreateDir(dir_));
  auto lock = env_->LockFile(JoinPath(dir_, "LOCK"));
  if (!lock.ok()) return lock.status();
  lock_ = std::move(*lock);
  auto temps = ListNumberedFiles(env_, dir_, FileType::kSnapshotTemp);
  if (!temps.ok()) return temps.status();
  for (uint64_t n : *temps) {
    RELGRAPH_RETURN_IF_ERROR(env_->RemoveFile(JoinPath(dir_, SnapshotTempName(n))));  // unfinished
  }
  auto state = RecoverState(env_, dir_, options_.graph, options_.feed, /*repair_torn_tail=*/true,
                            &recovery_);
  if (!state.ok()) return state.status();
  graph_ = std::move(state->graph);
  feed_ = std::move(state->feed);
  cursors_ = std::move(state->cursors);
  epochs_ = std::move(state->epochs);
  inbound_ = std::move(state->inbound);
  if (recovery_.torn_bytes > 0) {
    std::fprintf(
        stderr,
        "relgraph: recovery cut a torn tail of %llu bytes off %s (the writer died mid-append)\n",
        static_cast<unsigned long long>(recovery_.torn_bytes), recovery_.torn_file.c_str());
  }
  RELGRAPH_RETURN_IF_ERROR(OpenWal(recovery_.last_segment_no + 1, recovery_.last_lsn + 1));
  return RefreshOldestWalLsn();
}

Status Db::OpenWal(uint64_t segment_no, uint64_t next_lsn) {
  WalWriterOptions wo;
  wo.mode = options_.durability;
  wo.segment_bytes = options_.wal_segment_bytes;
  wo.retry_min = options_.wal_retry_min;
  wo.retry_max = options_.wal_retry_max;
  wo.on_event = options_.on_wal_event;
  auto wal = WalWriter::Open(env_, dir_, wo, segment_no, next_lsn);
  if (!wal.ok()) return wal.status();
  wal_ = std::move(*wal);
  return Status::OK();
}

Status Db::WritableLocked(std::string_view refused) const {
  if (closed_) return Status(Code::kUnavailable, "the database is closed");
  if (!wal_) return Status::OK();  // in memory
  if (Status h = wal_->health(); !h.ok()) {
    return Status(Code::kUnavailable,
                  std::string(refused) + ": the WAL cannot be written (retrying): " + h.message());
  }
  return Status::OK();
}

Status Db::Close() {
  fanout_.Stop();
  id_growth_.Stop();
  std::lock_guard no_snapshot_running(snapshot_mu_);
  std::unique_lock lock(mu_);
  closed_ = true;
  if (!wal_) return Status::OK();
  return wal_->Close();
}

TimestampMs Db::NowMs() const {
  Clock* clock = options_.graph.clock != nullptr ? options_.graph.clock : SystemClock::Default();
  return clock->NowMs();
}

Graph::StepsDone Db::RunStepsToEnd() {
  Graph::StepsDone total;
  bool more;
  {
    std::shared_lock lock(mu_);
    more = graph_->unfinished();
  }
  // A step ends at step_units units or once it has held the lock step_hold_us, checked every
  // 128 units: a loaded machine (a unit costs several times more when other processes share
  // the caches) must not stretch the writers' wait.
  constexpr uint32_t kCheckEvery = 128;
  const auto hold = std::chrono::microseconds(options_.step_hold_us);
  while (more) {
    if (options_.between_steps) options_.between_steps();
    // The call that began the operation held the lock just before the first step, too.
    LeaveLockFree(options_);
    std::unique_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    const auto start = std::chrono::steady_clock::now();
    for (uint32_t done = 0; more && done < options_.step_units; done += kCheckEvery) {
      const Graph::StepsDone d =
          graph_->RunSteps(std::min(kCheckEvery, options_.step_units - done));
      total.edges_removed += d.edges_removed;
      total.approved += d.approved;
      more = d.more;
      if (std::chrono::steady_clock::now() - start >= hold) break;
    }
  }
  return total;
}

// ---- the seam of the rooms that apply records ---------------------------------------------

LockedDb Db::Locked() {
  Clock* clock = options_.graph.clock != nullptr ? options_.graph.clock : SystemClock::Default();
  return LockedDb(*graph_, *feed_, cursors_, epochs_, inbound_, wal_.get(), place_, clock);
}

Status Db::RunExclusive(std::string_view refused, const std::function<Status(LockedDb&)>& fn,
                        uint64_t* commit_lsn, HandOver hand_over) {
  if (commit_lsn != nullptr) *commit_lsn = 0;
  Status failed;
  uint64_t lsn = 0;
  bool wake = false;
  {
    std::unique_lock lock(mu_);
    std::lock_guard feed_lock(feed_mu_);
    RELGRAPH_RETURN_IF_ERROR(WritableLocked(refused));
    LockedDb locked = Locked();
    failed = fn(locked);
    WakeIdGrowthLocked();
    lsn = locked.logged_lsn();
    wake = locked.wake_fanout();
  }
  if (wake && options_.background_fanout) WakeFanout();
  if (commit_lsn != nullptr &&
      (hand_over == HandOver::kEveryMode || options_.durability == DurabilityMode::kAlways)) {
    *commit_lsn = lsn;
  } else if (Status c = Commit(lsn); !c.ok() && failed.ok()) {
    failed = c;
  }
  return failed;
}

std::unique_lock<std::mutex> Db::PauseSteps() const {
  return std::unique_lock(steps_mu_);
}

void Db::BetweenSteps() const {
  if (options_.between_steps) options_.between_steps();
}

void Db::SetPlacement(PlacementFn place) {
  std::unique_lock lock(mu_);
  place_ = std::move(place);
}

// ---- feed reads --------------------------------------------------------------------------------

Result<FeedPage> Db::Timeline(UserId user, const FeedPageRequest& request) {
  std::shared_lock lock(mu_);
  std::lock_guard feed_lock(feed_mu_);
  return feed_->Timeline(*graph_, user, request);
}

Result<FeedPage> Db::UserPosts(UserId author, const FeedPageRequest& request) const {
  return ReadFeed([&](const Graph& g, const Feed& f) { return f.UserPosts(g, author, request); });
}

Result<std::vector<UserId>> Db::Mutes(UserId user) const {
  return ReadFeed([&](const Graph& g, const Feed& f) { return f.MutesOf(g, user); });
}

Result<std::vector<UserId>> Db::Hides(UserId author) const {
  return ReadFeed([&](const Graph& g, const Feed& f) { return f.HidesOf(g, author); });
}

Status Db::CheckInvariants() const {
  return ReadFeed([](const Graph& g, const Feed& f) -> Status {
    RELGRAPH_RETURN_IF_ERROR(g.CheckInvariants());
    return f.CheckInvariants(g);
  });
}

FeedStats Db::feed_stats() const {
  std::lock_guard feed_lock(feed_mu_);
  return feed_->Stats();
}

}  // namespace relgraph
