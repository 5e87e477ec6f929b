#include "engine/wal_records.h"

#include "storage/coding.h"

namespace relgraph {
namespace {

struct Decoded {
  WalRecordType type;
  uint64_t a = 0, b = 0;
  int64_t ts = 0;
};

Result<Decoded> Decode(uint8_t type, std::string_view payload) {
  Decoded d{static_cast<WalRecordType>(type)};
  Decoder in(payload);
  bool ok = false;
  size_t want = 0;
  switch (d.type) {
    case WalRecordType::kFollow:
      want = 24;
      ok = in.U64(&d.a) && in.U64(&d.b) && in.I64(&d.ts);
      break;
    case WalRecordType::kUnfollow:
      want = 16;
      ok = in.U64(&d.a) && in.U64(&d.b);
      break;
    case WalRecordType::kRemoveUser:
      want = 8;
      ok = in.U64(&d.a);
      break;
    default:
      return Status::Corruption("unknown WAL record type " + std::to_string(type));
  }
  if (!ok || in.remaining() != 0) {
    return Status::Corruption("WAL record of type " + std::to_string(type) + " has " +
                              std::to_string(payload.size()) + " payload bytes, expected " +
                              std::to_string(want));
  }
  return d;
}

}  // namespace

namespace {
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
  WalPayload p;
  Put64(&p, follower);
  Put64(&p, followee);
  return p;
}

WalPayload EncodeRemoveUserRecord(UserId user) {
  WalPayload p;
  Put64(&p, user);
  return p;
}

Result<Graph::ReplayOp> DecodeWalRecord(uint8_t type, std::string_view payload) {
  auto d = Decode(type, payload);
  if (!d.ok()) return d.status();
  switch (d->type) {
    case WalRecordType::kFollow:
      return Graph::ReplayOp{Graph::ReplayOp::kFollow, d->a, d->b, d->ts};
    case WalRecordType::kUnfollow:
      return Graph::ReplayOp{Graph::ReplayOp::kUnfollow, d->a, d->b, 0};
    case WalRecordType::kRemoveUser:
      return Graph::ReplayOp{Graph::ReplayOp::kRemoveUser, d->a, 0, 0};
  }
  return Status::Corruption("unreachable");
}

std::string DescribeWalRecord(uint8_t type, std::string_view payload) {
  auto d = Decode(type, payload);
  if (!d.ok()) return "bad record: " + d.status().message();
  switch (d->type) {
    case WalRecordType::kFollow:
      return "follow " + std::to_string(d->a) + " -> " + std::to_string(d->b) + " at " +
             std::to_string(d->ts);
    case WalRecordType::kUnfollow:
      return "unfollow " + std::to_string(d->a) + " -> " + std::to_string(d->b);
    case WalRecordType::kRemoveUser:
      return "remove_user " + std::to_string(d->a);
  }
  return "unreachable";
}

}  // namespace relgraph
