// The record table (storage/wal/record_table.h) and the one dispatch (DispatchRecord): every
// type reaches the handler method of its own name, wrappers reach none, and the table's rows
// agree with what the codec writes and what the rooms ask of a type.
#include "engine/durable/record_handler.h"

#include <doctest.h>

#include <set>
#include <string>

namespace relgraph {
namespace {

// Each method records the name of the type it was written for.
class NamingHandler final : public RecordHandler {
 public:
  std::string called;
#define RELGRAPH_NAMED(Method, name)     \
  Status Method(const WalOp&) override { \
    called = name;                       \
    return Status::OK();                 \
  }
  RELGRAPH_NAMED(Follow, "follow")
  RELGRAPH_NAMED(Unfollow, "unfollow")
  RELGRAPH_NAMED(RemoveUser, "remove_user")
  RELGRAPH_NAMED(Publish, "publish")
  RELGRAPH_NAMED(DeletePost, "delete_post")
  RELGRAPH_NAMED(Mute, "mute")
  RELGRAPH_NAMED(Unmute, "unmute")
  RELGRAPH_NAMED(Hide, "hide")
  RELGRAPH_NAMED(Unhide, "unhide")
  RELGRAPH_NAMED(Block, "block")
  RELGRAPH_NAMED(Unblock, "unblock")
  RELGRAPH_NAMED(SetPrivate, "set_private")
  RELGRAPH_NAMED(Request, "request")
  RELGRAPH_NAMED(Approve, "approve")
  RELGRAPH_NAMED(Reject, "reject")
  RELGRAPH_NAMED(Withdraw, "withdraw")
  RELGRAPH_NAMED(Cursor, "cursor")
  RELGRAPH_NAMED(CursorStart, "cursor_start")
  RELGRAPH_NAMED(Epoch, "epoch")
  RELGRAPH_NAMED(Posts, "posts")
  RELGRAPH_NAMED(PostsWanted, "posts_wanted")
#undef RELGRAPH_NAMED
};

TEST_CASE("record dispatch: every type reaches the method of its own name; wrappers reach none") {
  std::set<std::string> reached;
  for (uint8_t k = 1; k <= kMaxWalRecordType; ++k) {
    const RecordRow& row = kRecordTable[k];
    NamingHandler h;
    Status s = DispatchRecord(WalOp{row.type}, h);
    if (row.is(kRecordWrapper)) {
      CHECK(s.code() == Code::kInternal);
      CHECK(h.called.empty());
      continue;
    }
    REQUIRE(s.ok());
    CHECK_MESSAGE(h.called == row.name, "type ", int(k));
    reached.insert(h.called);
  }
  CHECK(reached.size() == kMaxWalRecordType - 2);  // every method, once
}

TEST_CASE("record table: names are unique and the rooms' questions read it") {
  std::set<std::string_view> names;
  for (uint8_t k = 1; k <= kMaxWalRecordType; ++k) names.insert(kRecordTable[k].name);
  CHECK(names.size() == kMaxWalRecordType);
  CHECK(EventKindMask() == 0x7f3fe);  // kinds 1..9 and 12..18, as on the wire
  CHECK(IsRemoteApplicable(WalRecordType::kFollow));
  CHECK_FALSE(IsRemoteApplicable(WalRecordType::kMute));  // a reader's own, never sent
  CHECK(IsMovable(WalRecordType::kMute));
  CHECK_FALSE(IsMovable(WalRecordType::kApprove));
  CHECK_FALSE(IsWalRecordType(0));
  CHECK_FALSE(IsWalRecordType(kMaxWalRecordType + 1));
}

TEST_CASE("record table: each fixed-length row is the length the codec writes and reads") {
  const std::pair<WalRecordType, WalPayload> encoded[] = {
      {WalRecordType::kFollow, EncodeFollowRecord(1, 2, 3, 0)},
      {WalRecordType::kUnfollow, EncodePairRecord(1, 2, 3)},
      {WalRecordType::kRemoveUser, EncodeRemoveUserRecord(1, 3)},
      {WalRecordType::kPublish, EncodePublishRecord(1, 2, 3, 0, 0)},
      {WalRecordType::kDeletePost, EncodePairRecord(1, 2, 3)},
      {WalRecordType::kMute, EncodePairRecord(1, 2, 3)},
      {WalRecordType::kUnmute, EncodePairRecord(1, 2, 3)},
      {WalRecordType::kHide, EncodePairRecord(1, 2, 3)},
      {WalRecordType::kUnhide, EncodePairRecord(1, 2, 3)},
      {WalRecordType::kEpoch, EncodeEpochRecord(2, 7, 3)},
      {WalRecordType::kBlock, EncodeBlockRecord(1, 2, 3, 0)},
      {WalRecordType::kUnblock, EncodePairRecord(1, 2, 3)},
      {WalRecordType::kSetPrivate, EncodeSetPrivateRecord(1, 3, true)},
      {WalRecordType::kRequest, EncodePairRecord(1, 2, 3)},
      {WalRecordType::kApprove, EncodeBlockRecord(1, 2, 3, 0)},
      {WalRecordType::kReject, EncodePairRecord(1, 2, 3)},
      {WalRecordType::kWithdraw, EncodePairRecord(1, 2, 3)},
      {WalRecordType::kPostsWanted, EncodePostsWantedRecord(1, 3)},
  };
  for (const auto& [type, payload] : encoded) {
    CAPTURE(RowOf(type).name);
    CHECK(payload.size == RowOf(type).v2_bytes);
    auto op = DecodeWalRecord(static_cast<uint8_t>(type), payload.view());
    REQUIRE(op.ok());
    CHECK(op->type == type);
    // One byte short is refused, naming the length the table gives.
    auto cut = DecodeWalRecord(static_cast<uint8_t>(type), payload.view().substr(1));
    if (RowOf(type).v1_bytes != payload.size - 1) CHECK(cut.status().code() == Code::kCorruption);
  }
}

}  // namespace
}  // namespace relgraph
