// Connections cost what they use: an idle connection holds no read or write buffer, a busy one
// gives its buffers back once drained, and INFO's connection_bytes says what they hold.
#include <doctest.h>

#include <thread>

#include "net/protocol/frame.h"
#include "tests/net/server/server_test_util.h"

namespace relgraph::net {
namespace {

using testing::TestServer;

// Polls the server's connection_bytes until pred holds (up to 3 s); returns the last value.
template <typename Pred>
uint64_t WaitForBytes(const TestServer& ts, Pred pred) {
  uint64_t bytes = ts.server->stats().connection_bytes;
  for (int i = 0; i < 300 && !pred(bytes); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    bytes = ts.server->stats().connection_bytes;
  }
  return bytes;
}

TEST_CASE("connections: an idle connection costs about a kilobyte, not a read buffer") {
  TestServer ts;
  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < 300; ++i) idle.push_back(ts.Connect());
  const uint64_t bytes = WaitForBytes(ts, [](uint64_t) { return true; });
  const uint64_t per_connection = bytes / ts.server->stats().connections;
  MESSAGE("bytes per idle connection: " << per_connection);
  CHECK(per_connection < 2048);  // 64 KiB each before buffers followed use
  auto info = idle[0]->Info();
  REQUIRE(info.ok());
  CHECK(info->Get("connection_bytes").value_or(0) > 0);
  CHECK(info->Get("rss_bytes").value_or(0) > 0);
  CHECK(info->Get("cpu_ms").has_value());
  idle.clear();
  CHECK(WaitForBytes(ts, [](uint64_t b) { return b == 0; }) == 0);
}

TEST_CASE("connections: a busy connection's buffers go back once its replies are read") {
  TestServer ts;
  auto c = ts.Connect();
  for (uint64_t u = 2; u <= 1001; ++u) REQUIRE(c->Follow(u, 1, int64_t(u)).ok());
  const uint64_t idle = WaitForBytes(ts, [](uint64_t) { return true; });
  FansRequest q;
  q.user = 1;
  q.limit = 1000;  // ~18 KB per reply
  for (int i = 0; i < 40; ++i) c->Queue(q);
  auto replies = c->Flush();  // ~720 KB of replies went through the buffers
  REQUIRE(replies.ok());
  REQUIRE(replies->size() == 40);
  const uint64_t after = WaitForBytes(ts, [&](uint64_t b) { return b <= idle + 2048; });
  MESSAGE("connection bytes idle " << idle << ", after a 720 KB batch " << after);
  CHECK(after <= idle + 2048);
}

TEST_CASE("connections: an unfinished frame is held, then released when it completes") {
  TestServer ts;
  auto c = ts.Connect();
  const uint64_t idle = WaitForBytes(ts, [](uint64_t) { return true; });
  RelationsRequest q;
  q.a = 1;
  for (uint64_t i = 2; i < 1002; ++i) q.others.push_back(i);  // an 8 KB request
  const std::string frame = testing::RequestFrame(9, q);
  const int fd = ts.RawSocket();
  const std::string hello = testing::HelloFrame();
  REQUIRE(::send(fd, hello.data(), hello.size(), MSG_NOSIGNAL) == ssize_t(hello.size()));
  const size_t half = frame.size() / 2;
  REQUIRE(::send(fd, frame.data(), half, MSG_NOSIGNAL) == ssize_t(half));
  const uint64_t holding = WaitForBytes(ts, [&](uint64_t b) { return b >= idle + half; });
  CHECK(holding >= idle + half);
  REQUIRE(::send(fd, frame.data() + half, frame.size() - half, MSG_NOSIGNAL) ==
          ssize_t(frame.size() - half));
  std::string reply(64 * 1024, '\0');
  size_t got = 0;
  while (got < 10) {
    const ssize_t n = ::recv(fd, reply.data() + got, reply.size() - got, 0);
    REQUIRE(n > 0);
    got += size_t(n);
  }
  const uint64_t back = WaitForBytes(ts, [&](uint64_t b) { return b < idle + half; });
  CHECK(back < idle + half);
  ::close(fd);
}

}  // namespace
}  // namespace relgraph::net
