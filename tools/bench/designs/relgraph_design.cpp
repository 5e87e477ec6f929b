#include "tools/bench/designs/relgraph_design.h"

#include <chrono>
#include <limits>
#include <thread>

namespace relgraph::bench {
namespace {

uint8_t FollowBits(net::RelationCode code) {
  return static_cast<uint8_t>(code) & (kFollowsBit | kFollowedByBit);
}

std::vector<Entry> PageEntries(const net::PageReply& page) {
  std::vector<Entry> out;
  out.reserve(page.entries.size());
  for (const net::PageEntry& e : page.entries) {
    out.push_back(Entry{e.user, e.ts, FollowBits(e.viewer_relation)});
  }
  return out;
}

class RelgraphDesign final : public Design {
 public:
  explicit RelgraphDesign(std::unique_ptr<net::Client> client) : client_(std::move(client)) {}
  std::string name() const override { return "relgraph"; }
  bool LoadsByFollow() const override { return true; }
  Status BulkLoad(const KeptGraph&) override {
    return Status(Code::kUnsupported, "relgraph loads by pipelined FOLLOW (the load row)");
  }

  Result<uint64_t> Execute(std::span<const Op> ops, std::vector<Answer>* answers) override {
    for (const Op& op : ops) Queue(op);
    auto replies = client_->Flush();
    if (!replies.ok()) return replies.status();
    uint64_t errors = 0;
    if (answers) answers->assign(ops.size(), Answer{});
    for (size_t i = 0; i < ops.size(); ++i) {
      const net::RawReply& r = (*replies)[i];
      if (!r.status.ok()) ++errors;
      if (answers) (*answers)[i] = Decode(ops[i], r);
    }
    return errors;
  }

  // Polls INFO until no publish waits for its fan-out (60 s at most).
  Status WaitIdle() override {
    for (int i = 0; i < 60'000; ++i) {
      auto info = client_->Info();
      if (!info.ok()) return info.status();
      if (info->Get("fanout_queue").value_or(0) == 0) return Status::OK();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return Status(Code::kTimeout, "the feed fan-out did not drain within 60 s");
  }

  Result<MemoryFacts> Memory() override {
    auto info = client_->Info();
    if (!info.ok()) return info.status();
    MemoryFacts m;
    m.bytes = info->Get("memory_bytes").value_or(0);
    m.note = "INFO memory_bytes (the follow graph); process rss " +
             std::to_string(info->Get("rss_bytes").value_or(0) >> 20) + " MiB";
    return m;
  }

 private:
  void Queue(const Op& op) {
    net::PageQuery page;
    page.user = op.user;
    page.limit = op.limit;
    if (op.viewer != 0) page.viewer = op.viewer;
    switch (op.kind) {
      case OpKind::kFollow:
        client_->Queue(
            net::FollowRequest{op.user, op.other, op.ts ? std::optional(op.ts) : std::nullopt});
        return;
      case OpKind::kUnfollow:
        client_->Queue(net::UnfollowRequest{op.user, op.other});
        return;
      case OpKind::kRelation:
        client_->Queue(net::RelationRequest{op.user, op.other});
        return;
      case OpKind::kRelations:
        client_->Queue(net::RelationsRequest{op.user, {op.others.begin(), op.others.end()}});
        return;
      case OpKind::kFollowingPage:
        client_->Queue(net::FollowingRequest{page});
        return;
      case OpKind::kFansPage:
        if (op.ts != 0) page.after = net::WireCursor{op.ts, op.cursor_user};
        client_->Queue(net::FansRequest{page});
        return;
      case OpKind::kFriendsPage:
        client_->Queue(net::FriendsRequest{page});
        return;
      case OpKind::kCounts:
        client_->Queue(net::CountsRequest{op.user});
        return;
      case OpKind::kPublish: {
        net::PublishRequest q;
        q.author = op.user;
        q.post = op.post;
        if (op.ts != 0) q.ts = op.ts;
        client_->Queue(q);
        return;
      }
      case OpKind::kTimeline: {
        net::TimelineRequest q;
        q.user = op.user;
        q.limit = op.limit;
        client_->Queue(q);
        return;
      }
    }
  }

  static Answer Decode(const Op& op, const net::RawReply& r) {
    Answer a;
    a.status = r.status;
    if (!r.status.ok()) return a;
    auto fill = [&](auto decoded, auto&& use) {
      if (!decoded.ok()) {
        a.status = decoded.status();
      } else {
        use(*decoded);
      }
    };
    switch (op.kind) {
      case OpKind::kFollow:
        fill(r.As<net::FollowReply>(), [&](const net::FollowReply& f) { a.changed = f.created; });
        break;
      case OpKind::kUnfollow:
        fill(r.As<net::UnfollowReply>(),
             [&](const net::UnfollowReply& u) { a.changed = u.removed; });
        break;
      case OpKind::kRelation:
        fill(r.As<net::RelationReply>(),
             [&](const net::RelationReply& x) { a.relations = {FollowBits(x.relation)}; });
        break;
      case OpKind::kRelations:
        fill(r.As<net::RelationsReply>(), [&](const net::RelationsReply& x) {
          for (net::RelationCode c : x.relations) a.relations.push_back(FollowBits(c));
        });
        break;
      case OpKind::kFollowingPage:
      case OpKind::kFansPage:
      case OpKind::kFriendsPage:
        fill(r.As<net::PageReply>(), [&](const net::PageReply& p) { a.entries = PageEntries(p); });
        break;
      case OpKind::kCounts:
        fill(r.As<net::CountsReply>(), [&](const net::CountsReply& c) {
          a.following = c.following;
          a.fans = c.fans;
          a.friends = c.friends;
        });
        break;
      case OpKind::kPublish:
        break;
      case OpKind::kTimeline:
        fill(r.As<net::FeedReply>(), [&](const net::FeedReply& f) {
          for (const net::FeedItem& item : f.entries)
            a.entries.push_back(Entry{item.post, item.ts, 0});
        });
        break;
    }
    return a;
  }

  std::unique_ptr<net::Client> client_;
};

}  // namespace

Result<std::unique_ptr<Design>> ConnectRelgraphDesign(const net::ClientOptions& options) {
  auto client = net::Client::Connect(options);
  if (!client.ok()) return client.status();
  return std::unique_ptr<Design>(new RelgraphDesign(std::move(*client)));
}

}  // namespace relgraph::bench
