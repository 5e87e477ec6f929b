#include "engine/durable/wal_records.h"

#include <cstring>

#include "engine/durable/cursor_table.h"
#include "storage/coding.h"

namespace relgraph {
namespace {

// The payload's length in version 1 and in version 2 (docs/wal-format.md).
struct PayloadSizes {
  size_t v1, v2;
};

PayloadSizes SizesOf(WalRecordType t) {
  return {RowOf(t).v1_bytes, RowOf(t).v2_bytes};  // {0, 0}: variable, checked apart
}

void Put64(WalPayload* p, uint64_t v) {
  EncodeFixed64(p->bytes + p->size, v);
  p->size += 8;
}

}  // namespace

WalPayload EncodeFollowRecord(UserId follower, UserId followee, TimestampMs ts, uint8_t flags) {
  WalPayload p;
  Put64(&p, follower);
  Put64(&p, followee);
  Put64(&p, static_cast<uint64_t>(ts));
  p.bytes[p.size++] = static_cast<char>(flags);
  return p;
}

WalPayload EncodePostsWantedRecord(UserId author, TimestampMs ts) {
  return EncodeRemoveUserRecord(author, ts);  // the same layout: a user and a time
}

WalPayload EncodeRemoveUserRecord(UserId user, TimestampMs ts) {
  WalPayload p;
  Put64(&p, user);
  Put64(&p, static_cast<uint64_t>(ts));
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

WalPayload EncodePairRecord(uint64_t a, uint64_t b, TimestampMs ts) {
  WalPayload p;
  Put64(&p, a);
  Put64(&p, b);
  Put64(&p, static_cast<uint64_t>(ts));
  return p;
}

WalPayload EncodeCursorRecord(std::string_view name, uint64_t lsn, TimestampMs ts) {
  WalPayload p;
  Put64(&p, lsn);
  Put64(&p, static_cast<uint64_t>(ts));
  std::memcpy(p.bytes + p.size, name.data(), name.size());
  p.size += static_cast<uint8_t>(name.size());
  return p;
}

WalPayload EncodeCursorStartRecord(std::string_view name, TimestampMs ts) {
  WalPayload p;
  Put64(&p, static_cast<uint64_t>(ts));
  std::memcpy(p.bytes + p.size, name.data(), name.size());
  p.size += static_cast<uint8_t>(name.size());
  return p;
}

WalPayload EncodeEpochRecord(uint64_t epoch, uint64_t id, TimestampMs ts) {
  return EncodePairRecord(epoch, id, ts);  // the same three fields
}

WalPayload EncodeBlockRecord(UserId blocker, UserId blocked, TimestampMs ts, uint8_t flags) {
  return EncodeFollowRecord(blocker, blocked, ts, flags);  // the same four fields
}

WalPayload EncodeSetPrivateRecord(UserId user, TimestampMs ts, bool on) {
  WalPayload p;
  Put64(&p, user);
  Put64(&p, static_cast<uint64_t>(ts));
  p.bytes[p.size++] = static_cast<char>(on ? 1 : 0);
  return p;
}

std::string EncodeRemoteRecord(uint32_t origin, uint64_t origin_lsn, WalRecordType type,
                               std::string_view payload) {
  std::string out(kRemoteHeaderBytes, '\0');
  EncodeFixed32(out.data(), origin);
  EncodeFixed64(out.data() + 4, origin_lsn);
  out[12] = static_cast<char>(type);
  out.append(payload);
  return out;
}

std::string EncodePostsRecord(UserId author, std::span<const FeedEntry> posts) {
  std::string out(12 + posts.size() * kPostsRecordEntryBytes, '\0');
  char* p = out.data();
  EncodeFixed64(p, author);
  EncodeFixed32(p + 8, static_cast<uint32_t>(posts.size()));
  p += 12;
  for (const FeedEntry& e : posts) {
    EncodeFixed64(p, e.post);
    EncodeFixed64(p + 8, static_cast<uint64_t>(e.ts));
    p[16] = static_cast<char>(e.kind);
    p += kPostsRecordEntryBytes;
  }
  return out;
}

size_t MaxRemotePayload(WalRecordType type) {
  return type == WalRecordType::kPosts ? 12 + size_t{kMaxPostsPerRecord} * kPostsRecordEntryBytes
                                       : kMaxRemoteInnerPayload;
}

std::string EncodeMovedRecord(uint32_t shard, WalRecordType type, std::string_view payload) {
  std::string out(kMovedHeaderBytes + payload.size(), '\0');
  EncodeFixed32(out.data(), shard);
  out[4] = static_cast<char>(type);
  std::memcpy(out.data() + kMovedHeaderBytes, payload.data(), payload.size());
  return out;
}

RemoteRecipients RecipientsOf(const WalOp& op) {
  switch (RowOf(op.type).recipients) {
    case RecordRecipients::kEveryShard:
      return {RemoteRecipients::kEveryShard};
    case RecordRecipients::kFansOfFirst:
      return {RemoteRecipients::kFansOf, {op.a, 0}, 1};
    case RecordRecipients::kFirst:
      return {RemoteRecipients::kUsers, {op.a, 0}, 1};
    case RecordRecipients::kBoth:
      return {RemoteRecipients::kUsers, {op.a, op.b}, 2};
    case RecordRecipients::kSecond:
    case RecordRecipients::kNone:
      break;
  }
  return {RemoteRecipients::kUsers, {op.b, 0}, 1};
}

std::vector<FeedEntry> WalOp::PostsOf() const {
  std::vector<FeedEntry> out(b);
  const char* p = posts.data();
  for (FeedEntry& e : out) {
    e.post = DecodeFixed64(p);
    e.author = a;
    e.ts = static_cast<TimestampMs>(DecodeFixed64(p + 8));
    e.kind = static_cast<uint8_t>(p[16]);
    p += kPostsRecordEntryBytes;
  }
  return out;
}

namespace {

// A posts record's payload (type 20, only inside a remote record), checked whole: every post
// nonzero, its kind and time in range, and the posts in (time, id) order, oldest first.
Result<WalOp> DecodePostsRecord(std::string_view payload) {
  WalOp op{WalRecordType::kPosts};
  if (payload.size() < 12 || (payload.size() - 12) % kPostsRecordEntryBytes != 0) {
    return Status::Corruption("WAL posts record has " + std::to_string(payload.size()) +
                              " payload bytes, expected 12 + 17 per post");
  }
  op.a = DecodeFixed64(payload.data());
  op.b = DecodeFixed32(payload.data() + 8);
  op.posts = payload.substr(12);
  if (op.b != op.posts.size() / kPostsRecordEntryBytes || op.b > kMaxPostsPerRecord) {
    return Status::Corruption("WAL posts record says " + std::to_string(op.b) + " posts in " +
                              std::to_string(op.posts.size()) + " bytes (at most " +
                              std::to_string(kMaxPostsPerRecord) + ")");
  }
  if (op.a == 0) return Status::Corruption("WAL posts record of user 0");
  const std::vector<FeedEntry> posts = op.PostsOf();
  for (size_t i = 0; i < posts.size(); ++i) {
    const FeedEntry& e = posts[i];
    if (e.post == 0 || e.kind > kMaxPostKind || e.ts < 0 || e.ts > kMaxTimestampMs) {
      return Status::Corruption("WAL posts record: post " + std::to_string(e.post) +
                                " is out of range");
    }
    if (i > 0 && !(PostKey{posts[i - 1].ts, posts[i - 1].post} < PostKey{e.ts, e.post})) {
      return Status::Corruption("WAL posts record: post " + std::to_string(e.post) +
                                " is out of order");
    }
  }
  return op;
}

}  // namespace

Graph::ReplayOp WalOp::graph_op() const {
  if (type == WalRecordType::kFollow) {
    return {Graph::ReplayOp::kFollow, a, b, ts, by_ensure_form()};
  }
  if (type == WalRecordType::kUnfollow) {
    return {Graph::ReplayOp::kUnfollow, a, b, 0, by_ensure_form()};
  }
  return {Graph::ReplayOp::kRemoveUser, a, 0, 0, by_ensure_form()};
}

Result<WalOp> DecodeWalRecord(uint8_t type, std::string_view payload) {
  if (!IsWalRecordType(type))
    return Status::Corruption("unknown WAL record type " + std::to_string(type));
  WalOp op{static_cast<WalRecordType>(type)};
  if (op.type == WalRecordType::kPosts) {
    return Status::Corruption("WAL posts record (type 20) outside a remote record");
  }
  if (op.type == WalRecordType::kRemote) {
    if (payload.size() <= kRemoteHeaderBytes) {
      return Status::Corruption("WAL remote record has " + std::to_string(payload.size()) +
                                " payload bytes, expected more than " +
                                std::to_string(kRemoteHeaderBytes));
    }
    const uint32_t origin = DecodeFixed32(payload.data());
    const uint64_t origin_lsn = DecodeFixed64(payload.data() + 4);
    const uint8_t inner = static_cast<uint8_t>(payload[12]);
    if (origin_lsn == 0) return Status::Corruption("WAL remote record with origin LSN 0");
    if (!RecordHas(inner, kRecordRemote)) {
      return Status::Corruption("WAL remote record of inner type " + std::to_string(inner) +
                                ", which no shard sends");
    }
    const std::string_view inner_payload = payload.substr(kRemoteHeaderBytes);
    if (inner == static_cast<uint8_t>(WalRecordType::kPosts)) {
      auto decoded = DecodePostsRecord(inner_payload);
      if (!decoded.ok()) return decoded.status();
      decoded->origin = origin;
      decoded->origin_lsn = origin_lsn;
      return decoded;
    }
    if (inner_payload.size() != SizesOf(static_cast<WalRecordType>(inner)).v2) {
      return Status::Corruption("WAL remote record's inner record of type " +
                                std::to_string(inner) + " has " +
                                std::to_string(inner_payload.size()) + " payload bytes, expected " +
                                std::to_string(SizesOf(static_cast<WalRecordType>(inner)).v2));
    }
    auto decoded = DecodeWalRecord(inner, inner_payload);
    if (!decoded.ok()) return decoded.status();
    decoded->origin = origin;
    decoded->origin_lsn = origin_lsn;
    return decoded;
  }
  if (op.type == WalRecordType::kMoved) {
    if (payload.size() <= kMovedHeaderBytes) {
      return Status::Corruption("WAL moved record has " + std::to_string(payload.size()) +
                                " payload bytes, expected more than " +
                                std::to_string(kMovedHeaderBytes));
    }
    const uint32_t shard = DecodeFixed32(payload.data());
    const uint8_t inner = static_cast<uint8_t>(payload[4]);
    if (!RecordHas(inner, kRecordMovable)) {
      return Status::Corruption("WAL moved record of inner type " + std::to_string(inner) +
                                ", which a bucket move does not carry");
    }
    const std::string_view inner_payload = payload.substr(kMovedHeaderBytes);
    Result<WalOp> decoded = Status::OK();
    if (inner == static_cast<uint8_t>(WalRecordType::kPosts)) {
      decoded = DecodePostsRecord(inner_payload);
    } else if (inner_payload.size() != SizesOf(static_cast<WalRecordType>(inner)).v2) {
      return Status::Corruption("WAL moved record's inner record of type " + std::to_string(inner) +
                                " has " + std::to_string(inner_payload.size()) +
                                " payload bytes, expected " +
                                std::to_string(SizesOf(static_cast<WalRecordType>(inner)).v2));
    } else {
      decoded = DecodeWalRecord(inner, inner_payload);
    }
    if (!decoded.ok()) return decoded.status();
    decoded->origin = shard;
    decoded->moved = true;
    return decoded;
  }
  if (op.type == WalRecordType::kCursor) {
    if (payload.size() < 17 || payload.size() > 16 + kMaxCursorName) {
      return Status::Corruption("WAL cursor record has " + std::to_string(payload.size()) +
                                " payload bytes, expected 17 to 80");
    }
    op.a = DecodeFixed64(payload.data());
    op.ts = static_cast<TimestampMs>(DecodeFixed64(payload.data() + 8));
    op.name = payload.substr(16);
    return op;
  }
  if (op.type == WalRecordType::kCursorStart) {
    if (payload.size() < 9 || payload.size() > 8 + kMaxCursorName) {
      return Status::Corruption("WAL cursor_start record has " + std::to_string(payload.size()) +
                                " payload bytes, expected 9 to 72");
    }
    op.ts = static_cast<TimestampMs>(DecodeFixed64(payload.data()));
    op.name = payload.substr(8);
    return op;
  }
  const PayloadSizes sizes = SizesOf(op.type);
  if (payload.size() != sizes.v1 && payload.size() != sizes.v2) {
    return Status::Corruption("WAL record of type " + std::to_string(type) + " has " +
                              std::to_string(payload.size()) + " payload bytes, expected " +
                              std::to_string(sizes.v2) + " (or " + std::to_string(sizes.v1) +
                              " in a version-1 segment)");
  }
  const bool v2 = payload.size() == sizes.v2;
  Decoder in(payload);
  in.U64(&op.a);
  if (op.type != WalRecordType::kRemoveUser && op.type != WalRecordType::kSetPrivate &&
      op.type != WalRecordType::kPostsWanted) {
    in.U64(&op.b);
  }
  switch (op.type) {
    case WalRecordType::kFollow:
    case WalRecordType::kBlock:
    case WalRecordType::kApprove:
      in.I64(&op.ts);
      if (v2) op.flags = static_cast<uint8_t>(payload[24]);
      break;
    case WalRecordType::kSetPrivate:
      in.I64(&op.ts);
      op.flags = static_cast<uint8_t>(payload[16]);
      if (op.flags > 1)
        return Status::Corruption("WAL set_private record with flag " + std::to_string(op.flags));
      break;
    case WalRecordType::kPublish:
      in.I64(&op.ts);
      op.kind = static_cast<uint8_t>(payload[24]);
      op.evicted = DecodeFixed64(payload.data() + 25);
      break;
    default:
      if (v2) in.I64(&op.ts);
      break;
  }
  return op;
}

}  // namespace relgraph
