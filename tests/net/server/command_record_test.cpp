// What the server records of each command, end to end over loopback: with a threshold of 0
// every command lands in the slow log with its arguments and client and is read back with
// SLOWLOG; reset empties it; a high threshold or -1 keeps nothing; the metrics count the same
// commands.
#include "net/server/command_record.h"

#include <doctest.h>

#include <mutex>
#include <vector>

#include "tests/net/server/server_test_util.h"

namespace relgraph::net {
namespace {

using testing::TestServer;

ServerOptions WithSlowLog(int64_t threshold_us, uint32_t max_len = 128) {
  ServerOptions o;
  o.slowlog_us = threshold_us;
  o.slowlog_max_len = max_len;
  return o;
}

TEST_CASE("command record: threshold 0 keeps every command, newest first, read back by SLOWLOG") {
  std::mutex mu;
  std::vector<SlowlogEntry> logged;
  ServerOptions o = WithSlowLog(0);
  o.on_slow_command = [&](const SlowlogEntry& e) {
    std::lock_guard lock(mu);
    logged.push_back(e);
  };
  TestServer ts(o);
  auto c = ts.Connect();
  const int64_t before_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
  REQUIRE(c->Follow(1, 2, int64_t{1700000000000}).ok());
  REQUIRE(c->Counts(1).ok());
  CHECK(c->Follow(3, 3).status().code() == Code::kSelfFollow);  // errors are kept too
  auto r = c->Slowlog();
  REQUIRE(r.ok());
  CHECK(r->threshold_us == 0);
  CHECK(r->max_len == 128);
  // HELLO, then the three commands; SLOWLOG is recorded after it answers.
  REQUIRE(r->entries.size() == 4);
  CHECK(r->entries[0].command == "follow");
  CHECK(r->entries[0].args == "3 3 -");
  CHECK(r->entries[1].command == "counts");
  CHECK(r->entries[1].args == "1");
  CHECK(r->entries[2].command == "follow");
  CHECK(r->entries[2].args == "1 2 1700000000000");
  CHECK(r->entries[3].command == "hello");
  CHECK(r->entries[3].args == "2");
  for (size_t i = 0; i < r->entries.size(); ++i) {
    const SlowlogEntry& e = r->entries[i];
    INFO(e.command);
    CHECK(e.id == r->entries.size() - i);  // ids grow from 1
    CHECK(e.client.rfind("127.0.0.1:", 0) == 0);
    CHECK(e.client != "127.0.0.1:" + std::to_string(ts.server->port()));  // the peer's, not ours
    CHECK(e.start_ms >= before_ms - 60'000);
  }
  // The log line's hook saw each entry as it was kept (the SLOWLOG too, once answered).
  {
    std::lock_guard lock(mu);
    REQUIRE(logged.size() == 5);
    CHECK(logged[4].command == "slowlog");
    CHECK(logged[1] == r->entries[2]);
  }
  // The SLOWLOG itself is there now; a count takes the newest.
  auto two = c->Slowlog(2, /*reset=*/true);
  REQUIRE(two.ok());
  REQUIRE(two->entries.size() == 2);
  CHECK(two->entries[0].command == "slowlog");
  CHECK(two->entries[0].args == "0 false");
  CHECK(two->entries[1].command == "follow");
  // Reset emptied it: only the resetting SLOWLOG, recorded after it answered, is left.
  auto after = c->Slowlog();
  REQUIRE(after.ok());
  REQUIRE(after->entries.size() == 1);
  CHECK(after->entries[0].command == "slowlog");
  CHECK(after->entries[0].args == "2 true");
  CHECK(after->entries[0].id == 6);  // ids keep growing across a reset
  CHECK(ts.server->command_metrics().slow_commands == 7);
}

TEST_CASE("command record: pipelined batches and background commands are kept with their own") {
  TestServer ts(WithSlowLog(0));
  auto c = ts.Connect();
  for (uint64_t i = 0; i < 5; ++i) c->Queue(FollowRequest{10, 20 + i, int64_t{1000}});
  auto replies = c->Flush();
  REQUIRE(replies.ok());
  REQUIRE(replies->size() == 5);
  auto r = c->Slowlog();
  REQUIRE(r.ok());
  REQUIRE(r->entries.size() == 6);  // hello and five follows, one entry each
  for (uint64_t i = 0; i < 5; ++i) {
    CHECK(r->entries[i].command == "follow");
    CHECK(r->entries[i].args == "10 " + std::to_string(24 - i) + " 1000");
  }
}

TEST_CASE("command record: a high threshold keeps nothing, and -1 is off") {
  for (const int64_t threshold : {int64_t{60'000'000}, kSlowLogOff}) {
    TestServer ts(WithSlowLog(threshold));
    auto c = ts.Connect();
    REQUIRE(c->Follow(1, 2).ok());
    REQUIRE(c->Counts(1).ok());
    auto r = c->Slowlog();
    REQUIRE(r.ok());
    CHECK(r->threshold_us == threshold);
    CHECK(r->entries.empty());
    CHECK(ts.server->command_metrics().slow_commands == 0);
    CHECK(ts.server->command_metrics().commands[uint8_t(Opcode::kFollow)].requests == 1);
  }
}

TEST_CASE("command record: a SLOWLOG body that is not its request is a protocol error") {
  TestServer ts(WithSlowLog(0));
  std::string frame;
  const size_t start = BeginFrame(&frame, 77, uint8_t(Opcode::kSlowlog), 0);
  frame.append("\x01", 1);  // one byte: count is a u16
  EndFrame(&frame, start);
  const int fd = ts.RawSocket();
  const std::string hello = testing::HelloFrame(1);
  REQUIRE(::send(fd, hello.data(), hello.size(), 0) == ssize_t(hello.size()));
  REQUIRE(::send(fd, frame.data(), frame.size(), 0) == ssize_t(frame.size()));
  std::string in;
  char buf[4096];
  DecodeResult d;
  size_t frames = 0;
  while (frames < 2) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    REQUIRE(n > 0);
    in.append(buf, size_t(n));
    while ((d = DecodeFrame(in, kDefaultMaxFrame)).state == DecodeState::kFrame) {
      if (++frames == 2) {
        CHECK(d.frame.request_id == 77);
        CHECK(StatusFromReply(d.frame).code() == Code::kProtocolError);
      }
      in.erase(0, d.frame.size);
    }
  }
  ::close(fd);
}

}  // namespace
}  // namespace relgraph::net
