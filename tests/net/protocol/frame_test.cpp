// The frame decoder: whole, fragmented and malformed input.
#include "net/protocol/frame.h"

#include <doctest.h>

#include <random>

#include "net/protocol/protocol.h"

namespace relgraph::net {
namespace {

std::string MakeFrame(uint32_t id, uint8_t op, std::string_view body) {
  std::string out;
  const size_t start = BeginFrame(&out, id, op, 0);
  out.append(body);
  EndFrame(&out, start);
  return out;
}

TEST_CASE("frame: a whole frame decodes to its fields") {
  const std::string f = MakeFrame(77, 0x12, "abc");
  REQUIRE(f.size() == kFrameHeaderBytes + 3);
  const DecodeResult r = DecodeFrame(f, kDefaultMaxFrame);
  REQUIRE(r.state == DecodeState::kFrame);
  CHECK(r.frame.request_id == 77);
  CHECK(r.frame.opcode == 0x12);
  CHECK(r.frame.flags_or_status == 0);
  CHECK(r.frame.body == "abc");
  CHECK(r.frame.size == f.size());
}

TEST_CASE("frame: fed one byte at a time, every prefix needs more and the last byte completes it") {
  std::mt19937_64 rng(5);
  std::string stream;
  std::vector<std::string> bodies;
  for (int i = 0; i < 50; ++i) {
    std::string body(rng() % 300, '\0');
    for (char& c : body) c = static_cast<char>(rng());
    bodies.push_back(body);
    stream += MakeFrame(static_cast<uint32_t>(i), static_cast<uint8_t>(i), body);
  }
  // Feed a growing buffer byte by byte, consuming frames as they complete.
  std::string buffer;
  size_t next = 0;
  for (char c : stream) {
    buffer.push_back(c);
    for (;;) {
      const DecodeResult r = DecodeFrame(buffer, kDefaultMaxFrame);
      REQUIRE(r.state != DecodeState::kBad);
      if (r.state == DecodeState::kNeedMore) break;
      REQUIRE(next < bodies.size());
      CHECK(r.frame.request_id == next);
      CHECK(r.frame.body == bodies[next]);
      buffer.erase(0, r.frame.size);
      ++next;
    }
  }
  CHECK(next == bodies.size());
  CHECK(buffer.empty());
}

TEST_CASE("frame: a length below 6 is a protocol error, whatever follows") {
  for (uint32_t length = 0; length < kMinFrameLength; ++length) {
    std::string f(4, '\0');
    for (int i = 0; i < 4; ++i) f[i] = static_cast<char>(length >> (8 * i));
    const DecodeResult r = DecodeFrame(f, kDefaultMaxFrame);
    REQUIRE(r.state == DecodeState::kBad);
    CHECK(r.error.code() == Code::kProtocolError);
    CHECK(r.error.message().find("below the minimum") != std::string::npos);
  }
}

TEST_CASE("frame: an oversized frame is refused from its header alone") {
  std::string f = MakeFrame(1, 2, std::string(5000, 'x'));
  const DecodeResult r = DecodeFrame(std::string_view(f).substr(0, 4), 4096);
  REQUIRE(r.state == DecodeState::kBad);
  CHECK(r.error.code() == Code::kResourceExhausted);
  CHECK(r.error.message().find("exceeds the limit of 4096") != std::string::npos);
  // Exactly at the limit is fine.
  const std::string at = MakeFrame(1, 2, std::string(4096 - kFrameHeaderBytes, 'x'));
  CHECK(DecodeFrame(at, 4096).state == DecodeState::kFrame);
  CHECK(DecodeFrame(at, 4095).state == DecodeState::kBad);
}

TEST_CASE("frame: an error reply carries code, message and detail") {
  std::string out;
  AppendErrorFrame(&out, 9, 0x10, Status(Code::kRateLimited, "slow down", 250));
  const DecodeResult r = DecodeFrame(out, kDefaultMaxFrame);
  REQUIRE(r.state == DecodeState::kFrame);
  const Status s = StatusFromReply(r.frame);
  CHECK(s.code() == Code::kRateLimited);
  CHECK(s.message() == "slow down");
  CHECK(s.retry_after_ms() == 250);
}

TEST_CASE("frame: a reply with an unknown status code is a protocol error, not a crash") {
  std::string out;
  AppendErrorFrame(&out, 9, 0x10, Status(Code::kInternal, "x"));
  out[9] = static_cast<char>(200);
  const DecodeResult r = DecodeFrame(out, kDefaultMaxFrame);
  REQUIRE(r.state == DecodeState::kFrame);
  CHECK(StatusFromReply(r.frame).code() == Code::kProtocolError);
}

}  // namespace
}  // namespace relgraph::net
