// Message bodies: round trips, the byte examples of docs/protocol.md, malformed bodies.
#include "net/protocol/messages.h"

#include <doctest.h>

#include <random>

#include "net/protocol/frame.h"

namespace relgraph::net {
namespace {

std::string Hex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    if (!out.empty()) out += ' ';
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

template <typename Msg>
std::string FrameOf(uint32_t id, uint8_t op, const Msg& msg) {
  std::string out;
  const size_t start = BeginFrame(&out, id, op, 0);
  WirePut(&out, msg);
  EndFrame(&out, start);
  return out;
}

TEST_CASE("messages: the examples in docs/protocol.md are what the encoder writes") {
  CHECK(Hex(FrameOf(1, 0x01, HelloRequest{1, "secret"})) ==
        "10 00 00 00 01 00 00 00 01 00 01 00 06 00 73 65 63 72 65 74");
  CHECK(Hex(FrameOf(5, 0x10, FollowRequest{1, 2, std::nullopt})) ==
        "17 00 00 00 05 00 00 00 10 00 01 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00 00");
  CHECK(Hex(FrameOf(6, 0x10, FollowRequest{1, 3, int64_t{1700000000000}})) ==
        "1f 00 00 00 06 00 00 00 10 00 01 00 00 00 00 00 00 00 03 00 00 00 00 00 00 00 01 00 68 "
        "e5 cf 8b 01 00 00");
  FollowingRequest following;
  following.user = 1;
  following.viewer = 2;
  CHECK(Hex(FrameOf(10, 0x14, following)) ==
        "1e 00 00 00 0a 00 00 00 14 00 01 00 00 00 00 00 00 00 14 00 00 00 00 00 00 01 02 00 00 "
        "00 00 00 00 00");
  PageReply page;
  page.entries.push_back({2, 1700000000000, RelationCode::kMutual, true});
  page.next = WireCursor{1700000000000, 2};
  CHECK(Hex(FrameOf(10, 0x14, page)) ==
        "2b 00 00 00 0a 00 00 00 14 00 01 00 02 00 00 00 00 00 00 00 00 68 e5 cf 8b 01 00 00 03 "
        "01 01 00 68 e5 cf 8b 01 00 00 02 00 00 00 00 00 00 00");
  std::string err;
  AppendErrorFrame(&err, 15, 0x10, Status(Code::kSelfFollow, "user 1 cannot follow itself"));
  CHECK(Hex(err) ==
        "2b 00 00 00 0f 00 00 00 10 03 00 00 00 00 00 00 00 00 1b 00 75 73 65 72 20 31 20 63 61 "
        "6e 6e 6f 74 20 66 6f 6c 6c 6f 77 20 69 74 73 65 6c 66");
}

TEST_CASE("messages: random page replies and queries survive a round trip") {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 500; ++i) {
    PageReply a;
    for (uint64_t n = rng() % 40; n > 0; --n) {
      a.entries.push_back({rng(), static_cast<int64_t>(rng()), static_cast<RelationCode>(rng() % 4),
                           rng() % 2 == 0});
    }
    if (rng() % 2) a.next = WireCursor{static_cast<int64_t>(rng()), rng()};
    std::string body;
    WirePut(&body, a);
    PageReply b;
    REQUIRE(WireDecode(body, &b, "page").ok());
    CHECK(b.entries == a.entries);
    CHECK(b.next == a.next);

    PageQuery q;
    q.user = rng();
    q.limit = static_cast<uint16_t>(rng());
    q.offset = static_cast<uint32_t>(rng());
    if (rng() % 2) q.after = WireCursor{static_cast<int64_t>(rng()), rng()};
    if (rng() % 2) q.viewer = rng();
    body.clear();
    WirePut(&body, q);
    PageQuery r;
    REQUIRE(WireDecode(body, &r, "query").ok());
    CHECK(r.user == q.user);
    CHECK(r.limit == q.limit);
    CHECK(r.offset == q.offset);
    CHECK(r.after == q.after);
    CHECK(r.viewer == q.viewer);
  }
}

TEST_CASE("messages: a RECORDS body written in place is the codec's, and reads back zero-copy") {
  std::mt19937_64 rng(12);
  for (int i = 0; i < 300; ++i) {
    RecordsBody a;
    a.first_lsn = rng();
    a.newest_lsn = rng();
    a.sent_us = static_cast<int64_t>(rng());
    for (uint64_t n = rng() % 600; n > 0; --n) {
      a.records.push_back({static_cast<uint8_t>(rng()), std::string(rng() % 90, 'x')});
    }
    std::string codec;
    WirePut(&codec, a);
    // As a primary writes it: the header's room first, the records, then the header.
    std::string in_place(kRecordsHeaderBytes, '\0');
    for (const WireRecord& r : a.records) {
      in_place.push_back(static_cast<char>(r.type));
      in_place.push_back(static_cast<char>(r.payload.size() & 0xff));
      in_place.push_back(static_cast<char>(r.payload.size() >> 8));
      in_place += r.payload;
    }
    EncodeRecordsHeader(in_place.data(), a.first_lsn, a.newest_lsn, a.sent_us, a.records.size());
    REQUIRE(Hex(in_place) == Hex(codec));
    RecordsBody header;
    size_t seen = 0;
    const Status walked = ForEachWireRecord(
        in_place, &header, [&](uint64_t lsn, uint8_t type, std::string_view payload) {
          CHECK(lsn == a.first_lsn + seen);
          CHECK(type == a.records[seen].type);
          CHECK(payload == a.records[seen].payload);
          ++seen;
          return Status::OK();
        });
    REQUIRE(walked.ok());
    CHECK(seen == a.records.size());
    CHECK(header.first_lsn == a.first_lsn);
    CHECK(header.newest_lsn == a.newest_lsn);
    CHECK(header.sent_us == a.sent_us);
  }
}

TEST_CASE("messages: every truncation and any trailing byte is a protocol error naming it") {
  RelationsRequest req{7, {1, 2, 3}};
  std::string body;
  WirePut(&body, req);
  for (size_t cut = 0; cut < body.size(); ++cut) {
    RelationsRequest out;
    const Status s = WireDecode(std::string_view(body).substr(0, cut), &out, "relations request");
    REQUIRE(!s.ok());
    CHECK(s.code() == Code::kProtocolError);
    CHECK(s.message().find("relations request body") == 0);
  }
  RelationsRequest out;
  const Status s = WireDecode(body + "x", &out, "relations request");
  CHECK(s.code() == Code::kProtocolError);
  CHECK(s.message().find("1 trailing bytes") != std::string::npos);
}

TEST_CASE("messages: a bool or presence byte other than 0 and 1 is refused") {
  std::string body;
  WirePut(&body, FollowRequest{1, 2, std::nullopt});
  body.back() = 2;  // the presence byte of ts
  FollowRequest f;
  CHECK(WireDecode(body, &f, "follow request").code() == Code::kProtocolError);
  std::string reply;
  WirePut(&reply, UnfollowReply{true});
  reply[0] = 7;
  UnfollowReply u;
  CHECK(WireDecode(reply, &u, "unfollow reply").code() == Code::kProtocolError);
}

TEST_CASE("messages: a list count larger than the bytes left is truncation, not a huge alloc") {
  std::string body;
  WireFixed(&body, uint64_t{1});
  WireFixed(&body, uint16_t{65535});
  RelationsRequest r;
  CHECK(WireDecode(body, &r, "relations request").code() == Code::kProtocolError);
}

TEST_CASE("messages: opcode names round trip") {
  for (int op = 0; op < 256; ++op) {
    const std::string_view name = OpcodeName(static_cast<uint8_t>(op));
    if (name == "unknown") continue;
    Opcode back;
    REQUIRE(OpcodeFromName(name, &back));
    CHECK(static_cast<int>(back) == op);
  }
}

}  // namespace
}  // namespace relgraph::net
