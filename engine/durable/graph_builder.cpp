#include "engine/durable/graph_builder.h"

#include <algorithm>
#include <string>

namespace relgraph {

GraphBuilder::GraphBuilder(const GraphOptions& options)
    : graph_(std::make_unique<Graph>(options)) {}

Result<InternalId> GraphBuilder::Intern(UserId user) {
  Graph& g = *graph_;
  // The precise check looks the user up, so it runs only once the graph is full.
  if (g.ids_.size() >= g.options().max_users) RELGRAPH_RETURN_IF_ERROR(g.CheckRoomFor(user));
  return g.Intern(user);
}

uint32_t& GraphBuilder::Mark(InternalId x) {
  if (x >= mark_.size()) mark_.resize(std::max<size_t>(x + 1, mark_.size() * 2), 0);
  return mark_[x];
}

Status GraphBuilder::AddFollowing(UserId follower, std::span<const SnapshotEdge> edges) {
  const TimeResolution& time = graph_->time();
  if (time.exact()) return AddList(follower, edges);
  if (follower != coarse_follower_) RELGRAPH_RETURN_IF_ERROR(FlushCoarse());
  coarse_follower_ = follower;
  for (const SnapshotEdge& e : edges) {
    if (e.ts_ms < 0 || e.ts_ms > kMaxTimestampMs)
      return Status::InvalidArgument("snapshot time out of range");
    coarse_.push_back({e.followee, time.Stored(e.ts_ms)});
  }
  return Status::OK();
}

Status GraphBuilder::FlushCoarse() {
  if (coarse_.empty()) return Status::OK();
  std::sort(coarse_.begin(), coarse_.end(), [](const SnapshotEdge& x, const SnapshotEdge& y) {
    return x.ts_ms != y.ts_ms ? x.ts_ms < y.ts_ms : x.followee < y.followee;
  });
  Status s = AddList(coarse_follower_, coarse_);
  coarse_.clear();
  return s;
}

Status GraphBuilder::AddList(UserId follower, std::span<const SnapshotEdge> edges) {
  Graph& g = *graph_;
  if (follower == 0) return Status(Code::kInvalidUserId, "snapshot names user id 0");
  for (const SnapshotEdge& e : edges) g.ids_.Prefetch(e.followee);
  auto interned = Intern(follower);
  if (!interned.ok()) return interned.status();
  const InternalId a = *interned;
  FollowingList& list = g.users_[a].following;
  if (a != marked_follower_) {
    // A new list: mark its followees under a fresh generation (a list split across calls
    // keeps its marks). Followers arrive once each, in one run of calls.
    if (!list.empty()) {
      return Status::Corruption("snapshot lists user " + std::to_string(follower) +
                                " in two places");
    }
    ++generation_;
    marked_follower_ = a;
  }
  EntryKey prev{-1, 0};
  if (!list.empty())
    prev = {list.TsAt(list.size() - 1), g.ids_.External(list.PeerAt(list.size() - 1))};
  scratch_.clear();
  for (const SnapshotEdge& e : edges) {
    if (e.followee == 0) return Status(Code::kInvalidUserId, "snapshot names user id 0");
    if (e.followee == follower) {
      return Status(Code::kSelfFollow,
                    "snapshot has user " + std::to_string(follower) + " following itself");
    }
    if (e.ts_ms < 0 || e.ts_ms > kMaxTimestampMs)
      return Status::InvalidArgument("snapshot time out of range");
    const EntryKey key{e.ts_ms, e.followee};
    if (!(prev < key)) {
      return Status::Corruption("snapshot list of user " + std::to_string(follower) +
                                " is out of order at followee " + std::to_string(e.followee));
    }
    prev = key;
    auto followee = Intern(e.followee);
    if (!followee.ok()) return followee.status();
    const InternalId b = *followee;
    uint32_t& m = Mark(b);
    if (m == generation_) {
      return Status::Corruption("snapshot lists followee " + std::to_string(e.followee) +
                                " twice for user " + std::to_string(follower));
    }
    m = generation_;
    edges_.push_back({a, b, static_cast<uint32_t>(list.size() + scratch_.size())});
    scratch_.push_back(MakeEntry(b, e.ts_ms, false));
  }
  if (list.size() + scratch_.size() > FollowingList::kMaxSize) {
    return Status::Corruption("snapshot lists more than " +
                              std::to_string(FollowingList::kMaxSize) + " followees for user " +
                              std::to_string(follower));
  }
  g.users_[a].following.AppendRun(scratch_.data(), static_cast<uint32_t>(scratch_.size()), g.slab_);
  return Status::OK();
}

Result<std::unique_ptr<Graph>> GraphBuilder::Finish() {
  RELGRAPH_RETURN_IF_ERROR(FlushCoarse());
  Graph& g = *graph_;
  const size_t users = g.users_.size();

  // ---- counting sort of the edges by followee --------------------------------------------------
  std::vector<uint32_t> start(users + 1, 0);
  for (const PendingEdge& e : edges_) ++start[e.followee + 1];
  for (size_t i = 0; i < users; ++i) start[i + 1] += start[i];
  struct Fan {
    InternalId follower;
    uint32_t index;  // the edge's position in the follower's list
    TimestampMs ts;
  };
  std::vector<Fan> fans(edges_.size());
  {
    std::vector<uint32_t> fill(start.begin(), start.end() - 1);
    // edges_ is grouped by follower: each list is decoded once for the times of its edges.
    std::vector<EdgeEntry> list;
    InternalId decoded = kNoInternalId;
    for (const PendingEdge& e : edges_) {
      if (e.follower != decoded) {
        const FollowingList& following = g.users_[e.follower].following;
        list.resize(following.size());
        following.Decode(list.data());
        decoded = e.follower;
      }
      fans[fill[e.followee]++] = {e.follower, e.index, EntryTs(list[e.index])};
    }
  }
  edges_.clear();
  edges_.shrink_to_fit();

  // ---- per followee: order, mutual bits, fan list
  // ------------------------------------------------
  const FanContext ctx = g.fan_context();
  std::vector<EdgeEntry> run;
  for (size_t b = 0; b < users; ++b) {
    const uint32_t begin = start[b], end = start[b + 1];
    if (begin == end) continue;
    std::sort(fans.begin() + begin, fans.begin() + end, [&](const Fan& x, const Fan& y) {
      return x.ts != y.ts ? x.ts < y.ts : g.ids_.External(x.follower) < g.ids_.External(y.follower);
    });
    // Mark whom b follows, then each fan a is mutual iff a is marked.
    const FollowingList& theirs = g.users_[b].following;
    ++generation_;
    for (uint32_t i = 0; i < theirs.size(); ++i) Mark(theirs.PeerAt(i)) = generation_;
    run.clear();
    for (uint32_t i = begin; i < end; ++i) {
      const InternalId a = fans[i].follower;
      const bool mutual = Mark(a) == generation_;  // b follows a back
      run.push_back(MakeEntry(a, fans[i].ts, mutual));
      if (mutual) {
        g.users_[a].following.SetMutual(fans[i].index, true);
        ++g.users_[a].friends;
      }
    }
    g.ChangeFans(g.users_[b].fans, [&] {
      g.users_[b].fans.BuildFromSorted(run.data(), static_cast<uint32_t>(run.size()), ctx);
    });
    g.edge_count_ += run.size();
  }
  return std::move(graph_);
}

}  // namespace relgraph
