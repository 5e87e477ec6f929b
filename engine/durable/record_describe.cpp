// DescribeWalRecord (engine/durable/wal_records.h): a record in words for wal-dump, through
// the one dispatch, so a new type cannot go undescribed.
#include <string>

#include "engine/durable/record_handler.h"
#include "engine/durable/wal_records.h"

namespace relgraph {
namespace {

class DescribeHandler final : public RecordHandler {
 public:
  explicit DescribeHandler(const WalOp& op)
      : a_(std::to_string(op.a)),
        b_(std::to_string(op.b)),
        at_(op.ts != 0 ? " at " + std::to_string(op.ts) : std::string()) {}
  std::string text;

  Status Follow(const WalOp& op) override {
    return Say("follow " + a_ + " -> " + b_ + " at " + std::to_string(op.ts) +
               ((op.flags & kFollowBecameFriends) != 0 ? " (friends)" : "") +
               ((op.flags & kFollowFirstRemoteFan) != 0 ? " (first fan here)" : "") +
               ((op.flags & kFollowOwnPostsKept) != 0 ? " (its own posts kept)" : ""));
  }
  Status Unfollow(const WalOp&) override { return Say("unfollow " + a_ + " -> " + b_ + at_); }
  Status RemoveUser(const WalOp&) override { return Say("remove_user " + a_ + at_); }
  Status Publish(const WalOp& op) override {
    return Say("publish " + a_ + " post " + b_ + " kind " + std::to_string(op.kind) + " at " +
               std::to_string(op.ts) +
               (op.evicted != 0 ? " evicting " + std::to_string(op.evicted) : std::string()));
  }
  Status DeletePost(const WalOp&) override {
    return Say("delete_post " + a_ + " post " + b_ + at_);
  }
  Status Mute(const WalOp&) override { return Say("mute " + a_ + " mutes " + b_ + at_); }
  Status Unmute(const WalOp&) override { return Say("unmute " + a_ + " unmutes " + b_ + at_); }
  Status Hide(const WalOp&) override { return Say("hide " + a_ + " hides from " + b_ + at_); }
  Status Unhide(const WalOp&) override { return Say("unhide " + a_ + " unhides from " + b_ + at_); }
  Status Block(const WalOp& op) override {
    std::string removed;
    if ((op.flags & kBlockUnfollowed) != 0) removed += ", removed " + a_ + " -> " + b_;
    if ((op.flags & kBlockLostFollower) != 0) removed += ", removed " + b_ + " -> " + a_;
    if ((op.flags & kBlockDroppedRequest) != 0) removed += ", dropped a request";
    return Say("block " + a_ + " blocks " + b_ + at_ + removed);
  }
  Status Unblock(const WalOp&) override { return Say("unblock " + a_ + " unblocks " + b_ + at_); }
  Status SetPrivate(const WalOp& op) override {
    return Say("set_private " + a_ + (op.flags != 0 ? " private" : " public") + at_);
  }
  Status Request(const WalOp&) override {
    return Say("request " + a_ + " asks to follow " + b_ + at_);
  }
  Status Approve(const WalOp& op) override {
    return Say("approve " + a_ + " approves " + b_ + at_ +
               ((op.flags & kFollowBecameFriends) != 0 ? " (friends)" : "") +
               ((op.flags & kApproveByRequester) != 0 ? " (by the requester's shard)" : ""));
  }
  Status Reject(const WalOp&) override { return Say("reject " + a_ + " rejects " + b_ + at_); }
  Status Withdraw(const WalOp&) override {
    return Say("withdraw " + a_ + " withdraws its request to " + b_ + at_);
  }
  Status Cursor(const WalOp& op) override {
    return Say(op.a == 0 ? "cursor " + std::string(op.name) + " removed" + at_
                         : "cursor " + std::string(op.name) + " acked " + a_ + at_);
  }
  Status CursorStart(const WalOp& op) override {
    return Say("cursor " + std::string(op.name) + " acked 0 (resumes at LSN 1)" + at_);
  }
  Status Epoch(const WalOp&) override {
    return Say("epoch " + a_ + " (id " + b_ + ") begins" + at_);
  }
  Status Posts(const WalOp&) override { return Say("posts of " + a_ + ", " + b_ + " retained"); }
  Status PostsWanted(const WalOp&) override { return Say("posts_wanted of " + a_ + at_); }

 private:
  Status Say(std::string words) {
    text = std::move(words);
    return Status::OK();
  }
  const std::string a_, b_, at_;
};

std::string DescribeOp(const WalOp& op) {
  DescribeHandler h(op);
  Status s = DispatchRecord(op, h);
  return s.ok() ? h.text : "bad record: " + s.message();
}

}  // namespace

std::string DescribeWalRecord(uint8_t type, std::string_view payload) {
  auto d = DecodeWalRecord(type, payload);
  if (!d.ok()) return "bad record: " + d.status().message();
  if (d->is_remote()) {
    return "remote from shard " + std::to_string(d->origin) + " LSN " +
           std::to_string(d->origin_lsn) + ": " + DescribeOp(*d);
  }
  if (d->moved) return "moved (shard " + std::to_string(d->origin) + "): " + DescribeOp(*d);
  return DescribeOp(*d);
}

}  // namespace relgraph
