#include "engine/durable/wal_records.h"

#include "storage/coding.h"

namespace relgraph {
namespace {

size_t PayloadSize(WalRecordType t) {
  switch (t) {
    case WalRecordType::kFollow:
      return 24;
    case WalRecordType::kRemoveUser:
      return 8;
    case WalRecordType::kPublish:
      return 33;
    case WalRecordType::kUnfollow:
    case WalRecordType::kDeletePost:
    case WalRecordType::kMute:
    case WalRecordType::kUnmute:
    case WalRecordType::kHide:
    case WalRecordType::kUnhide:
      return 16;
  }
  return 0;
}

void Put64(WalPayload* p, uint64_t v) {
  EncodeFixed64(p->bytes + p->size, v);
  p->size += 8;
}

}  // namespace

WalPayload EncodeFollowRecord(UserId follower, UserId followee, TimestampMs ts) {
  WalPayload p;
  Put64(&p, follower);
  Put64(&p, followee);
  Put64(&p, static_cast<uint64_t>(ts));
  return p;
}

WalPayload EncodeUnfollowRecord(UserId follower, UserId followee) {
  return EncodePairRecord(follower, followee);
}

WalPayload EncodeRemoveUserRecord(UserId user) {
  WalPayload p;
  Put64(&p, user);
  return p;
}

WalPayload EncodePublishRecord(UserId author, PostId post, TimestampMs ts, uint8_t kind,
                               PostId evicted) {
  WalPayload p;
  Put64(&p, author);
  Put64(&p, post);
  Put64(&p, static_cast<uint64_t>(ts));
  p.bytes[p.size++] = static_cast<char>(kind);
  Put64(&p, evicted);
  return p;
}

WalPayload EncodePairRecord(uint64_t a, uint64_t b) {
  WalPayload p;
  Put64(&p, a);
  Put64(&p, b);
  return p;
}

Graph::ReplayOp WalOp::graph_op() const {
  switch (type) {
    case WalRecordType::kFollow:
      return {Graph::ReplayOp::kFollow, a, b, ts};
    case WalRecordType::kUnfollow:
      return {Graph::ReplayOp::kUnfollow, a, b, 0};
    default:
      return {Graph::ReplayOp::kRemoveUser, a, 0, 0};
  }
}

Result<WalOp> DecodeWalRecord(uint8_t type, std::string_view payload) {
  if (type < 1 || type > 9)
    return Status::Corruption("unknown WAL record type " + std::to_string(type));
  WalOp op{static_cast<WalRecordType>(type)};
  const size_t want = PayloadSize(op.type);
  if (payload.size() != want) {
    return Status::Corruption("WAL record of type " + std::to_string(type) + " has " +
                              std::to_string(payload.size()) + " payload bytes, expected " +
                              std::to_string(want));
  }
  Decoder in(payload);
  in.U64(&op.a);
  if (want >= 16) in.U64(&op.b);
  if (op.type == WalRecordType::kFollow || op.type == WalRecordType::kPublish) in.I64(&op.ts);
  if (op.type == WalRecordType::kPublish) {
    op.kind = static_cast<uint8_t>(payload[24]);
    op.evicted = DecodeFixed64(payload.data() + 25);
  }
  return op;
}

std::string DescribeWalRecord(uint8_t type, std::string_view payload) {
  auto d = DecodeWalRecord(type, payload);
  if (!d.ok()) return "bad record: " + d.status().message();
  const std::string a = std::to_string(d->a), b = std::to_string(d->b);
  switch (d->type) {
    case WalRecordType::kFollow:
      return "follow " + a + " -> " + b + " at " + std::to_string(d->ts);
    case WalRecordType::kUnfollow:
      return "unfollow " + a + " -> " + b;
    case WalRecordType::kRemoveUser:
      return "remove_user " + a;
    case WalRecordType::kPublish:
      return "publish " + a + " post " + b + " kind " + std::to_string(d->kind) + " at " +
             std::to_string(d->ts) +
             (d->evicted != 0 ? " evicting " + std::to_string(d->evicted) : std::string());
    case WalRecordType::kDeletePost:
      return "delete_post " + a + " post " + b;
    case WalRecordType::kMute:
      return "mute " + a + " mutes " + b;
    case WalRecordType::kUnmute:
      return "unmute " + a + " unmutes " + b;
    case WalRecordType::kHide:
      return "hide " + a + " hides from " + b;
    case WalRecordType::kUnhide:
      return "unhide " + a + " unhides from " + b;
  }
  return "unreachable";
}

}  // namespace relgraph
