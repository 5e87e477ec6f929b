// WAL record payloads: every type round-trips in version 2, version-1 payloads still decode
// (without time and flags), and any other length or type is corruption.
#include <doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "engine/durable/cursor_table.h"
#include "engine/durable/wal_records.h"
#include "storage/coding.h"

namespace relgraph {
namespace {

WalPayload Encode(const WalOp& op) {
  switch (op.type) {
    case WalRecordType::kFollow:
      return EncodeFollowRecord(op.a, op.b, op.ts, op.flags);
    case WalRecordType::kRemoveUser:
      return EncodeRemoveUserRecord(op.a, op.ts);
    case WalRecordType::kPublish:
      return EncodePublishRecord(op.a, op.b, op.ts, op.kind, op.evicted);
    default:
      return EncodePairRecord(op.a, op.b, op.ts);
  }
}

// The version-1 payload of the same op: the fields version 2 added left out.
std::string EncodeV1(const WalOp& op) {
  std::string p;
  PutFixed64(&p, op.a);
  if (op.type == WalRecordType::kRemoveUser) return p;
  PutFixed64(&p, op.b);
  if (op.type == WalRecordType::kFollow) PutFixed64(&p, static_cast<uint64_t>(op.ts));
  if (op.type == WalRecordType::kPublish) {
    PutFixed64(&p, static_cast<uint64_t>(op.ts));
    p.push_back(static_cast<char>(op.kind));
    PutFixed64(&p, op.evicted);
  }
  return p;
}

WalOp RandomOp(std::mt19937_64& rng) {
  WalOp op{static_cast<WalRecordType>(1 + rng() % 9)};
  // Ids and times across their whole width, with the edges of the range over-weighted.
  auto wide = [&]() -> uint64_t {
    switch (rng() % 4) {
      case 0:
        return rng() % 3;
      case 1:
        return ~uint64_t{0} - rng() % 3;
      default:
        return rng();
    }
  };
  op.a = wide();
  if (op.type != WalRecordType::kRemoveUser) op.b = wide();
  op.ts = static_cast<TimestampMs>(wide());
  if (op.type == WalRecordType::kFollow) op.flags = rng() % 2;
  if (op.type == WalRecordType::kPublish) {
    op.kind = static_cast<uint8_t>(rng());
    op.evicted = wide();
  }
  return op;
}

void CheckSame(const WalOp& got, const WalOp& want) {
  CHECK(got.type == want.type);
  CHECK(got.a == want.a);
  CHECK(got.b == want.b);
  CHECK(got.ts == want.ts);
  CHECK(got.flags == want.flags);
  CHECK(got.kind == want.kind);
  CHECK(got.evicted == want.evicted);
}

TEST_CASE("wal records: every type round-trips, and version-1 payloads decode without time") {
  std::mt19937_64 rng(21);
  for (int i = 0; i < 20000; ++i) {
    const WalOp op = RandomOp(rng);
    const WalPayload p = Encode(op);
    auto d = DecodeWalRecord(static_cast<uint8_t>(op.type), p.view());
    REQUIRE(d.ok());
    CheckSame(*d, op);

    WalOp old = op;  // what a version-1 record of it says
    old.flags = 0;
    if (op.type != WalRecordType::kFollow && op.type != WalRecordType::kPublish) old.ts = 0;
    const std::string v1 = EncodeV1(op);
    auto d1 = DecodeWalRecord(static_cast<uint8_t>(op.type), v1);
    REQUIRE(d1.ok());
    CheckSame(*d1, old);
  }
}

TEST_CASE("wal records: any other length, and unknown types, are corruption naming both") {
  std::mt19937_64 rng(22);
  for (uint8_t type = 1; type <= 9; ++type) {
    WalOp op = RandomOp(rng);
    op.type = static_cast<WalRecordType>(type);
    const size_t v2 = Encode(op).size, v1 = EncodeV1(op).size();
    for (size_t len = 0; len <= 40; ++len) {
      const std::string payload(len, '\x5a');
      auto d = DecodeWalRecord(type, payload);
      CHECK_MESSAGE(d.ok() == (len == v1 || len == v2), "type " << int(type) << " len " << len);
      if (!d.ok()) {
        CHECK(d.status().code() == Code::kCorruption);
        CHECK(d.status().message().find(std::to_string(v2)) != std::string::npos);
      }
    }
  }
  for (int type : {0, 24, 63, 255}) {
    auto d = DecodeWalRecord(static_cast<uint8_t>(type), std::string(16, '\0'));
    CHECK(d.status().code() == Code::kCorruption);
    CHECK(d.status().message().find("unknown WAL record type") != std::string::npos);
  }
}

TEST_CASE("wal records: a cursor record carries its name, LSN and time; others are corruption") {
  for (size_t len = 1; len <= kMaxCursorName; ++len) {
    const std::string name(len, 'c');
    const WalPayload p = EncodeCursorRecord(name, 1234567, 1700);
    auto d = DecodeWalRecord(10, p.view());
    REQUIRE(d.ok());
    CHECK(d->is_cursor_op());
    CHECK(!d->is_feed_op());
    CHECK(!d->is_graph_op());
    CHECK(d->a == 1234567);
    CHECK(d->ts == 1700);
    CHECK(d->name == name);
  }
  for (size_t len : {0, 8, 16, 81, 100}) {
    CHECK(DecodeWalRecord(10, std::string(len, 'x')).status().code() == Code::kCorruption);
  }
  CHECK(DescribeWalRecord(10, EncodeCursorRecord("indexer", 42, 7).view()) ==
        "cursor indexer acked 42 at 7");
  // Type 10's LSN 0 removes the cursor.
  auto removal = DecodeWalRecord(10, EncodeCursorRecord("indexer", 0, 7).view());
  REQUIRE(removal.ok());
  CHECK(removal->removes_cursor());
  CHECK(DescribeWalRecord(10, EncodeCursorRecord("indexer", 0, 7).view()) ==
        "cursor indexer removed at 7");
}

TEST_CASE("wal records: a cursor_start record is an ACK of LSN 0, never a removal") {
  for (size_t len = 1; len <= kMaxCursorName; ++len) {
    const std::string name(len, 's');
    const WalPayload p = EncodeCursorStartRecord(name, 1700);
    CHECK(p.size == 8 + len);
    auto d = DecodeWalRecord(23, p.view());
    REQUIRE(d.ok());
    CHECK(d->type == WalRecordType::kCursorStart);
    CHECK(d->is_cursor_op());
    CHECK(!d->removes_cursor());
    CHECK(!d->is_feed_op());
    CHECK(!d->is_graph_op());
    CHECK(d->a == 0);
    CHECK(d->ts == 1700);
    CHECK(d->name == name);
  }
  for (size_t len : {0, 8, 73, 100}) {
    CHECK(DecodeWalRecord(23, std::string(len, 'x')).status().code() == Code::kCorruption);
  }
  CHECK(!IsRemoteApplicable(WalRecordType::kCursorStart));
  CHECK(DescribeWalRecord(23, EncodeCursorStartRecord("new", 7).view()) ==
        "cursor new acked 0 (resumes at LSN 1) at 7");
}

TEST_CASE("wal records: an epoch record carries number, id and time, in 24 bytes exactly") {
  std::mt19937_64 rng(23);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t number = rng(), id = rng();
    const TimestampMs ts = static_cast<TimestampMs>(rng() >> 1);
    auto d = DecodeWalRecord(11, EncodeEpochRecord(number, id, ts).view());
    REQUIRE(d.ok());
    CHECK(d->is_epoch_op());
    CHECK(!d->is_feed_op());
    CHECK(!d->is_graph_op());
    CHECK(!d->is_cursor_op());
    CHECK((d->a == number && d->b == id && d->ts == ts));
  }
  for (size_t len : {0, 16, 23, 25, 32}) {
    CHECK(DecodeWalRecord(11, std::string(len, 'x')).status().code() == Code::kCorruption);
  }
  CHECK(DescribeWalRecord(11, EncodeEpochRecord(2, 99, 7).view()) == "epoch 2 (id 99) begins at 7");
}

TEST_CASE("wal records: descriptions name the change, its time and a follow's friendship") {
  CHECK(DescribeWalRecord(1, EncodeFollowRecord(42, 7, 1700, kFollowBecameFriends).view()) ==
        "follow 42 -> 7 at 1700 (friends)");
  CHECK(DescribeWalRecord(2, EncodePairRecord(42, 7, 1800).view()) == "unfollow 42 -> 7 at 1800");
  CHECK(DescribeWalRecord(3, std::string(8, '\0')) == "remove_user 0");
  CHECK(DescribeWalRecord(3, std::string(3, '\0')).starts_with("bad record: "));
}

}  // namespace
}  // namespace relgraph

namespace relgraph {
namespace {

TEST_CASE("wal records: blocks, private marks and requests round-trip; other lengths are refused") {
  struct Case {
    WalRecordType type;
    WalPayload payload;
    uint64_t a, b;
    uint8_t flags;
  };
  const TimestampMs ts = 1'700'000'000'123;
  const Case cases[] = {
      {WalRecordType::kBlock, EncodeBlockRecord(7, 9, ts, kBlockUnfollowed | kBlockDroppedRequest),
       7, 9, kBlockUnfollowed | kBlockDroppedRequest},
      {WalRecordType::kUnblock, EncodePairRecord(7, 9, ts), 7, 9, 0},
      {WalRecordType::kSetPrivate, EncodeSetPrivateRecord(7, ts, true), 7, 0, 1},
      {WalRecordType::kSetPrivate, EncodeSetPrivateRecord(7, ts, false), 7, 0, 0},
      {WalRecordType::kRequest, EncodePairRecord(5, 6, ts), 5, 6, 0},
      {WalRecordType::kApprove, EncodeBlockRecord(6, 5, ts, kFollowBecameFriends), 6, 5, 1},
      {WalRecordType::kApprove, EncodeBlockRecord(6, 5, ts, kApproveByRequester), 6, 5, 2},
      {WalRecordType::kReject, EncodePairRecord(6, 5, ts), 6, 5, 0},
      {WalRecordType::kWithdraw, EncodePairRecord(5, 6, ts), 5, 6, 0},
  };
  for (const Case& c : cases) {
    const auto type = static_cast<uint8_t>(c.type);
    CAPTURE(int{type});
    auto d = DecodeWalRecord(type, c.payload.view());
    REQUIRE(d.ok());
    CHECK(d->type == c.type);
    CHECK(d->a == c.a);
    CHECK(d->b == c.b);
    CHECK(d->ts == ts);
    CHECK(d->flags == c.flags);
    CHECK(d->is_access_op());
    CHECK(!d->is_graph_op());
    CHECK(!d->is_feed_op());
    CHECK(DescribeWalRecord(type, c.payload.view()).find(std::to_string(c.a)) != std::string::npos);
    for (size_t len = 0; len <= 40; ++len) {
      if (len == c.payload.size) continue;
      auto bad = DecodeWalRecord(type, std::string(len, '\x01'));
      CHECK(bad.status().code() == Code::kCorruption);
    }
  }
  // A set_private flag other than 0 or 1 is no writer's.
  WalPayload odd = EncodeSetPrivateRecord(7, ts, true);
  odd.bytes[16] = 2;
  CHECK(DecodeWalRecord(static_cast<uint8_t>(WalRecordType::kSetPrivate), odd.view())
            .status()
            .code() == Code::kCorruption);
}

TEST_CASE("wal records: a remote record wraps the changes shards exchange, and only those") {
  const TimestampMs ts = 1'700'000'000'123;
  struct Inner {
    WalRecordType type;
    WalPayload payload;
  };
  const Inner inner[] = {
      {WalRecordType::kFollow, EncodeFollowRecord(7, 9, ts, 1)},
      {WalRecordType::kUnfollow, EncodePairRecord(7, 9, ts)},
      {WalRecordType::kRemoveUser, EncodeRemoveUserRecord(7, ts)},
      {WalRecordType::kBlock, EncodeBlockRecord(7, 9, ts, kBlockLostFollower)},
      {WalRecordType::kUnblock, EncodePairRecord(7, 9, ts)},
      {WalRecordType::kSetPrivate, EncodeSetPrivateRecord(7, ts, false)},
      {WalRecordType::kRequest, EncodePairRecord(7, 9, ts)},
      {WalRecordType::kApprove, EncodeBlockRecord(7, 9, ts, kApproveByRequester)},
      {WalRecordType::kReject, EncodePairRecord(7, 9, ts)},
      {WalRecordType::kWithdraw, EncodePairRecord(7, 9, ts)},
      {WalRecordType::kPostsWanted, EncodePostsWantedRecord(7, ts)}};
  const uint8_t remote = static_cast<uint8_t>(WalRecordType::kRemote);
  for (const Inner& in : inner) {
    for (uint32_t origin : {0u, 3u, 0xffffffffu}) {
      const uint64_t lsn = uint64_t{1} + origin;
      const std::string p = EncodeRemoteRecord(origin, lsn, in.type, in.payload.view());
      CHECK(p.size() == kRemoteHeaderBytes + in.payload.size);
      auto d = DecodeWalRecord(remote, p);
      REQUIRE_MESSAGE(d.ok(), d.status().ToString());
      CHECK(d->type == in.type);
      CHECK(d->is_remote());
      CHECK(d->origin == origin);
      CHECK(d->origin_lsn == lsn);
      CHECK(d->a == 7);
      CHECK(d->ts == ts);
      if (d->is_graph_op()) CHECK(d->graph_op().remote);
      CHECK(!d->clears_posts());  // only this shard's own records clear copies
      CHECK(DescribeWalRecord(remote, p).find("remote from shard " + std::to_string(origin)) !=
            std::string::npos);
      // Cut anywhere, it is corruption.
      for (size_t len = 0; len < p.size(); ++len) {
        CHECK(DecodeWalRecord(remote, std::string_view(p).substr(0, len)).status().code() ==
              Code::kCorruption);
      }
    }
    // A local record of the same type replays by the batch's mode.
    auto local = DecodeWalRecord(static_cast<uint8_t>(in.type), in.payload.view());
    REQUIRE(local.ok());
    CHECK(!local->is_remote());
    if (local->is_graph_op()) CHECK(!local->graph_op().remote);
    CHECK(IsRemoteApplicable(in.type));
  }
  // Origin LSN 0, and inner types no shard sends (a cursor, a mute, a remote record).
  const WalPayload follow = EncodeFollowRecord(7, 9, ts, 0);
  CHECK(DecodeWalRecord(remote, EncodeRemoteRecord(1, 0, WalRecordType::kFollow, follow.view()))
            .status()
            .code() == Code::kCorruption);
  for (WalRecordType t : {WalRecordType::kCursor, WalRecordType::kMute, WalRecordType::kRemote}) {
    CHECK(!IsRemoteApplicable(t));
    std::string p = EncodeRemoteRecord(1, 5, WalRecordType::kFollow, follow.view());
    p[12] = static_cast<char>(t);
    auto d = DecodeWalRecord(remote, p);
    CHECK(d.status().code() == Code::kCorruption);
    CHECK(d.status().message().find("inner type") != std::string::npos);
  }
}

// The posts record (type 20) exists only inside a remote record; random lists of every length
// round-trip, and every damage is corruption naming it.
TEST_CASE("posts records round-trip inside remote records and refuse damage") {
  std::mt19937_64 rng(20);
  const uint8_t remote = static_cast<uint8_t>(WalRecordType::kRemote);
  for (uint32_t n : {0u, 1u, 2u, 17u, 300u, kMaxPostsPerRecord}) {
    std::vector<FeedEntry> posts(n);
    TimestampMs ts = static_cast<TimestampMs>(rng() % 1000);
    for (FeedEntry& e : posts) {
      ts += static_cast<TimestampMs>(rng() % 3);  // equal times too: then ids ascend
      e = {rng() % 1'000'000'000 + 1, 42, ts, static_cast<uint8_t>(rng() % 64)};
    }
    std::sort(posts.begin(), posts.end(), [](const FeedEntry& x, const FeedEntry& y) {
      return PostKey{x.ts, x.post} < PostKey{y.ts, y.post};
    });
    posts.erase(std::unique(posts.begin(), posts.end(),
                            [](const FeedEntry& x, const FeedEntry& y) {
                              return x.ts == y.ts && x.post == y.post;
                            }),
                posts.end());
    const std::string inner = EncodePostsRecord(42, posts);
    CHECK(inner.size() <= MaxRemotePayload(WalRecordType::kPosts));
    const std::string p = EncodeRemoteRecord(9, 77, WalRecordType::kPosts, inner);
    auto d = DecodeWalRecord(remote, p);
    REQUIRE_MESSAGE(d.ok(), d.status().ToString());
    CHECK(d->type == WalRecordType::kPosts);
    CHECK(d->is_feed_op());
    CHECK(d->origin == 9);
    CHECK(d->origin_lsn == 77);
    CHECK(d->a == 42);
    CHECK(d->PostsOf() == posts);
    CHECK(DescribeWalRecord(remote, p).find("posts of 42") != std::string::npos);
    // Outside a remote record it is corruption.
    CHECK(DecodeWalRecord(static_cast<uint8_t>(WalRecordType::kPosts), inner).status().code() ==
          Code::kCorruption);
    if (posts.size() >= 2) {
      std::string cut = p.substr(0, p.size() - 1);
      CHECK(DecodeWalRecord(remote, cut).status().code() == Code::kCorruption);
      std::string swapped =
          EncodeRemoteRecord(9, 77, WalRecordType::kPosts,
                             EncodePostsRecord(42, std::vector<FeedEntry>{posts[1], posts[0]}));
      auto bad = DecodeWalRecord(remote, swapped);
      CHECK(bad.status().code() == Code::kCorruption);
      CHECK(bad.status().message().find("out of order") != std::string::npos);
      std::string wrong_count = p;
      wrong_count[kRemoteHeaderBytes + 8] ^= 1;
      CHECK(DecodeWalRecord(remote, wrong_count).status().code() == Code::kCorruption);
      std::string zero_id =
          EncodeRemoteRecord(9, 77, WalRecordType::kPosts,
                             EncodePostsRecord(42, std::vector<FeedEntry>{{0, 42, 5, 0}}));
      CHECK(DecodeWalRecord(remote, zero_id).status().code() == Code::kCorruption);
    }
  }
}

TEST_CASE(
    "a follow flagged as a remote user's first fan clears its posts only where decided, and only "
    "copies") {
  const WalPayload follow = EncodeFollowRecord(7, 9, 5, kFollowFirstRemoteFan);
  auto local = DecodeWalRecord(static_cast<uint8_t>(WalRecordType::kFollow), follow.view());
  REQUIRE(local.ok());
  CHECK(local->clears_posts());
  CHECK(DescribeWalRecord(1, follow.view()).find("first fan here") != std::string::npos);
  auto remote = DecodeWalRecord(static_cast<uint8_t>(WalRecordType::kRemote),
                                EncodeRemoteRecord(2, 3, WalRecordType::kFollow, follow.view()));
  REQUIRE(remote.ok());
  CHECK(!remote->clears_posts());  // the followee's own shard keeps its posts
  const WalPayload plain = EncodeFollowRecord(7, 9, 5, kFollowBecameFriends);
  CHECK(!DecodeWalRecord(1, plain.view())->clears_posts());
  // The followee's own posts (its bucket handed over, maybe not exported yet) stay.
  const WalPayload kept = EncodeFollowRecord(7, 9, 5, kFollowFirstRemoteFan | kFollowOwnPostsKept);
  auto own = DecodeWalRecord(static_cast<uint8_t>(WalRecordType::kFollow), kept.view());
  REQUIRE(own.ok());
  CHECK(!own->clears_posts());
  CHECK((own->flags & kFollowFirstRemoteFan) != 0);  // still asks for a back-fill
  CHECK(DescribeWalRecord(1, kept.view()).find("its own posts kept") != std::string::npos);
  CHECK(local->cleared_author() == 9);
  // A posts-wanted record (a first fan made by an approval) clears its author's copies.
  const WalPayload wanted = EncodePostsWantedRecord(7, 5);
  const uint8_t type = static_cast<uint8_t>(WalRecordType::kPostsWanted);
  auto w = DecodeWalRecord(type, wanted.view());
  REQUIRE(w.ok());
  CHECK(w->clears_posts());
  CHECK(w->cleared_author() == 7);
  CHECK(w->ts == 5);
  CHECK(!w->is_graph_op());
  CHECK(!w->is_feed_op());
  CHECK(!w->is_access_op());
  CHECK(DescribeWalRecord(type, wanted.view()) == "posts_wanted of 7 at 5");
  for (size_t len = 0; len <= 24; ++len) {
    if (len != 16)
      CHECK(DecodeWalRecord(type, std::string(len, '\x01')).status().code() == Code::kCorruption);
  }
}

TEST_CASE("moved records carry a bucket's state, applied by ensure forms, and only that") {
  const WalPayload follow = EncodeFollowRecord(5, 9, 1234, 0);
  const std::string moved = EncodeMovedRecord(3, WalRecordType::kFollow, follow.view());
  auto op = DecodeWalRecord(static_cast<uint8_t>(WalRecordType::kMoved), moved);
  REQUIRE(op.ok());
  CHECK(op->type == WalRecordType::kFollow);
  CHECK(op->a == 5);
  CHECK(op->b == 9);
  CHECK(op->ts == 1234);
  CHECK(op->moved);
  CHECK(op->origin == 3);
  CHECK_FALSE(op->is_remote());  // no inbound position moves
  CHECK(op->by_ensure_form());
  CHECK(op->graph_op().remote);
  CHECK_FALSE(op->clears_posts());
  CHECK(DescribeWalRecord(22, moved) == "moved (shard 3): follow 5 -> 9 at 1234");

  const std::string posts =
      EncodePostsRecord(7, std::vector<FeedEntry>{{11, 7, 100, 1}, {12, 7, 200, 0}});
  const std::string moved_posts = EncodeMovedRecord(2, WalRecordType::kPosts, posts);
  auto p = DecodeWalRecord(22, moved_posts);  // its entries point into moved_posts
  REQUIRE(p.ok());
  CHECK(p->type == WalRecordType::kPosts);
  CHECK(p->PostsOf().size() == 2);
  CHECK(p->moved);

  // Every type a move carries, and no other.
  for (uint8_t t = 1; t <= kMaxWalRecordType; ++t) {
    const auto type = static_cast<WalRecordType>(t);
    const bool movable =
        t == 1 || t == 2 || (t >= 6 && t <= 9) || (t >= 12 && t <= 15) || t == 18 || t == 20;
    CHECK_MESSAGE(IsMovable(type) == movable, "type " << int(t));
    if (movable || t == 10 || t == 19 || t == 22) continue;
    auto bad = DecodeWalRecord(22, EncodeMovedRecord(1, type, std::string(24, '\0')));
    CHECK(bad.status().code() == Code::kCorruption);
  }
  CHECK(DecodeWalRecord(22, std::string(5, '\0')).status().code() == Code::kCorruption);
  // An inner record of the wrong length.
  CHECK(
      DecodeWalRecord(22, EncodeMovedRecord(1, WalRecordType::kFollow, "short")).status().code() ==
      Code::kCorruption);
}

}  // namespace
}  // namespace relgraph
