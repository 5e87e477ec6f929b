#include "engine/durable/record_handler.h"

#include <string>

// A type missing from DispatchRecord's switch fails the build, not just warns.
#pragma GCC diagnostic error "-Wswitch"

namespace relgraph {

Status RecordHandler::NotApplied(const WalOp& op, std::string_view handler) {
  return Status(Code::kInternal, std::string(handler) + " does not apply a " +
                                     std::string(RowOf(op.type).name) + " record");
}

// The one switch over record types that applies them (the codec, wal_records.cpp, has the
// other). No default: -Wswitch names a type added to the table and not here.
Status DispatchRecord(const WalOp& op, RecordHandler& h) {
  switch (op.type) {
    case WalRecordType::kFollow:
      return h.Follow(op);
    case WalRecordType::kUnfollow:
      return h.Unfollow(op);
    case WalRecordType::kRemoveUser:
      return h.RemoveUser(op);
    case WalRecordType::kPublish:
      return h.Publish(op);
    case WalRecordType::kDeletePost:
      return h.DeletePost(op);
    case WalRecordType::kMute:
      return h.Mute(op);
    case WalRecordType::kUnmute:
      return h.Unmute(op);
    case WalRecordType::kHide:
      return h.Hide(op);
    case WalRecordType::kUnhide:
      return h.Unhide(op);
    case WalRecordType::kCursor:
      return h.Cursor(op);
    case WalRecordType::kEpoch:
      return h.Epoch(op);
    case WalRecordType::kBlock:
      return h.Block(op);
    case WalRecordType::kUnblock:
      return h.Unblock(op);
    case WalRecordType::kSetPrivate:
      return h.SetPrivate(op);
    case WalRecordType::kRequest:
      return h.Request(op);
    case WalRecordType::kApprove:
      return h.Approve(op);
    case WalRecordType::kReject:
      return h.Reject(op);
    case WalRecordType::kWithdraw:
      return h.Withdraw(op);
    case WalRecordType::kPosts:
      return h.Posts(op);
    case WalRecordType::kPostsWanted:
      return h.PostsWanted(op);
    case WalRecordType::kCursorStart:
      return h.CursorStart(op);
    case WalRecordType::kRemote:
    case WalRecordType::kMoved:
      break;
  }
  return Status(Code::kInternal, "a " + std::string(RowOf(op.type).name) +
                                     " record reached a handler: it decodes as its inner record");
}

}  // namespace relgraph
