#include "tools/bench/design_workloads.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace relgraph::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr uint64_t kOtherSets = 1024;
constexpr size_t kRelationsBatch = 100;

}  // namespace

DesignWorkloads::DesignWorkloads(const GeneratedGraph& data, const ServerFlags& flags,
                                 std::string target, uint32_t max_following, uint64_t seed,
                                 bool no_load)
    : data_(data),
      flags_(flags),
      target_(std::move(target)),
      max_following_(max_following),
      seed_(seed),
      no_load_(no_load),
      // Post ids: the wall clock in ms, shifted past any run's operation numbers, so rounds
      // against one server never publish an id twice.
      next_post_(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count())
                 << 22) {
  kept_ = KeepEdges(data, max_following);
  std::unordered_set<UserId> from;
  std::unordered_map<UserId, uint32_t> fans;  // its keys are the followees
  for (const BenchEdge& e : kept_.edges) {
    from.insert(e.follower);
    ++fans[e.followee];
  }
  followers_.assign(from.begin(), from.end());
  for (const auto& [user, n] : fans) followees_.push_back(user);
  std::sort(followers_.begin(), followers_.end());
  std::sort(followees_.begin(), followees_.end());
  for (size_t i = 0; i < kept_.edges.size(); ++i) {
    if (kept_.reverse_ts[i] >= 0) with_friends_.push_back(kept_.edges[i].follower);
  }
  std::sort(with_friends_.begin(), with_friends_.end());
  with_friends_.erase(std::unique(with_friends_.begin(), with_friends_.end()), with_friends_.end());
  if (with_friends_.empty()) with_friends_ = followers_;

  uint32_t best = 0;
  for (const auto& [user, n] : fans) {
    if (n > best || (n == best && user < top_account_)) best = n, top_account_ = user;
  }
  std::vector<std::pair<TimestampMs, UserId>> top;  // the top account's fans, newest first
  for (const BenchEdge& e : kept_.edges) {
    if (e.followee == top_account_) top.emplace_back(e.ts, e.follower);
  }
  std::sort(top.rbegin(), top.rend());
  for (uint64_t i = 0; i < 100'000 && !top.empty(); ++i) {
    deep_cursors_.push_back(top[Mix(seed_ + i) % top.size()]);
  }
  for (uint64_t i = 0; i < kOtherSets * kRelationsBatch; ++i) {
    const uint64_t r = Mix(seed_ * 7 + i);
    // Half accounts with many fans (a random edge's followee), half any user.
    others_.push_back(r & 1 ? kept_.edges[(r >> 1) % kept_.edges.size()].followee
                            : followers_[(r >> 1) % followers_.size()]);
  }
}

const std::vector<std::string>& DesignWorkloads::Names() {
  static const std::vector<std::string> names = [] {
    const std::vector<std::string> rows = {
        "relation",           "relations_100", "following_page", "fans_page", "fans_page_deep",
        "friends_page",       "counts",        "follow",         "unfollow",  "publish",
        "timeline_first_page"};
    std::vector<std::string> all = {"load"};
    all.insert(all.end(), rows.begin(), rows.end());
    for (const std::string& r : rows) all.push_back(r + "_unpipelined");
    return all;
  }();
  return names;
}

Result<std::unique_ptr<Design>> DesignWorkloads::Connect() const {
  return ConnectDesign(target_, flags_.client, max_following_);
}

Op DesignWorkloads::MakeOp(const std::string& name, uint64_t i) const {
  const uint64_t r = Mix(seed_ * 1'000'003 + i);
  const UserId follower = followers_[r % followers_.size()];
  const UserId followee = followees_[(r >> 20) % followees_.size()];
  const UserId viewer = followers_[(r >> 40) % followers_.size()];
  Op op;
  op.user = follower;
  if (name == "load") {
    const BenchEdge& e = data_.edges[i];
    op.kind = OpKind::kFollow;
    op.user = e.follower;
    op.other = e.followee;
    op.ts = e.ts;
  } else if (name == "relation") {
    const BenchEdge& e = kept_.edges[r % kept_.edges.size()];
    op.kind = OpKind::kRelation;
    op.user = r & 1 ? e.follower : follower;
    op.other = r & 1 ? e.followee : followee;
  } else if (name == "relations_100") {
    op.kind = OpKind::kRelations;
    op.user = viewer;
    op.others = std::span<const UserId>(others_).subspan((r % kOtherSets) * kRelationsBatch,
                                                         kRelationsBatch);
  } else if (name == "following_page") {
    op.kind = OpKind::kFollowingPage;
    op.viewer = viewer;
  } else if (name == "fans_page") {
    op.kind = OpKind::kFansPage;
    op.user = followee;
    op.viewer = viewer;
  } else if (name == "fans_page_deep") {
    const auto& [ts, user] = deep_cursors_[r % deep_cursors_.size()];
    op.kind = OpKind::kFansPage;
    op.user = top_account_;
    op.ts = ts;
    op.cursor_user = user;
  } else if (name == "friends_page") {
    op.kind = OpKind::kFriendsPage;
    op.user = with_friends_[r % with_friends_.size()];
  } else if (name == "counts") {
    op.kind = OpKind::kCounts;
  } else if (name == "follow" || name == "unfollow") {
    // The same pairs for both rows (and both variants): unfollow removes what follow made.
    op.kind = name == "follow" ? OpKind::kFollow : OpKind::kUnfollow;
    op.other = followees_[(r >> 20) % followees_.size()];
    if (op.other == op.user) op.other = followees_[((r >> 20) + 1) % followees_.size()];
  } else if (name == "publish") {
    op.kind = OpKind::kPublish;
    op.user = followee;
    op.post = next_post_++;
  } else {  // timeline_first_page
    op.kind = OpKind::kTimeline;
  }
  return op;
}

Result<WorkloadResult> DesignWorkloads::Pipelined(const std::string& name, uint64_t ops) {
  ErrorTally errors;
  const auto start = SteadyClock::now();
  RELGRAPH_RETURN_IF_ERROR(RunPipelinedClients(
      flags_.connections, flags_.pipeline, ops, [&] { return Connect(); },
      [&](Design& design, uint64_t begin, uint64_t end) -> Status {
        std::vector<Op> batch;
        for (uint64_t i = begin; i < end; ++i) batch.push_back(MakeOp(name, i));
        std::vector<Answer> answers;
        auto n = design.Execute(batch, &answers);
        if (!n.ok()) return n.status();
        errors.Add(*n, answers);
        return Status::OK();
      }));
  if (name == "publish") {  // the row ends when every fan-out is done
    auto design = Connect();
    if (!design.ok()) return design.status();
    RELGRAPH_RETURN_IF_ERROR((*design)->WaitIdle());
  }
  return Summarize(name, ops, std::chrono::duration<double>(SteadyClock::now() - start).count(), {},
                   errors.Note());
}

Result<WorkloadResult> DesignWorkloads::Unpipelined(const std::string& name, uint64_t ops) {
  const std::string base = PipelinedName(name);
  auto design = Connect();
  if (!design.ok()) return design.status();
  ErrorTally errors;
  std::vector<double> micros;
  const auto start = SteadyClock::now();
  RELGRAPH_RETURN_IF_ERROR(RunUnpipelined(
      **design, ops, [&](uint64_t i) { return MakeOp(base, i); }, &micros, &errors));
  std::string note = errors.Note();
  if (base == "publish") {
    RELGRAPH_RETURN_IF_ERROR((*design)->WaitIdle());
    if ((*design)->name() == "relgraph") {
      note += std::string(note.empty() ? "" : "; ") +
              "relgraph replies before its fan-out, which the row waits for at the end";
    }
  }
  return Summarize(name, ops, std::chrono::duration<double>(SteadyClock::now() - start).count(),
                   std::move(micros), note);
}

Status DesignWorkloads::ReadMemory() {
  auto design = Connect();
  if (!design.ok()) return design.status();
  auto m = (*design)->Memory();
  if (!m.ok()) return m.status();
  memory_ = MemoryRow{};
  std::unordered_set<UserId> users(followers_.begin(), followers_.end());
  users.insert(followees_.begin(), followees_.end());
  memory_.users = users.size();
  memory_.edges = kept_.edges.size();
  memory_.rss_bytes = memory_.engine_bytes = m->bytes;
  memory_.breakdown = m->note;
  memory_.source = (*design)->name() + "'s own accounting";
  return Status::OK();
}

Result<WorkloadResult> DesignWorkloads::Load() {
  const auto start = SteadyClock::now();
  Result<WorkloadResult> r = WorkloadResult{};
  if (!no_load_) {
    auto design = Connect();
    if (!design.ok()) return design.status();
    if ((*design)->LoadsByFollow()) {
      r = Pipelined("load", data_.edges.size());
    } else {
      RELGRAPH_RETURN_IF_ERROR((*design)->BulkLoad(kept_));
      r = Summarize("load", data_.edges.size(),
                    std::chrono::duration<double>(SteadyClock::now() - start).count(), {},
                    "bulk load: " + std::to_string(kept_.edges.size()) + " edges kept");
    }
    if (!r.ok()) return r;
  }
  RELGRAPH_RETURN_IF_ERROR(ReadMemory());
  return r;
}

Result<WorkloadResult> DesignWorkloads::Run(const std::string& name) {
  if (name == "load") return Load();
  if (name.ends_with(kUnpipelinedSuffix)) return Unpipelined(name, flags_.latency_ops);
  return Pipelined(name, flags_.ops);
}

}  // namespace relgraph::bench
