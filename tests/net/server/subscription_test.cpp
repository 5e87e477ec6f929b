// The change stream over the wire: SUBSCRIBE, EVENTS frames, flow control, resume across a
// server restart, and every error, against a real server on loopback.
#include <doctest.h>
#include <poll.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <functional>
#include <map>
#include <random>
#include <thread>

#include "net/client/subscriber.h"
#include "net/protocol/frame.h"
#include "tests/net/server/server_test_util.h"
#include "tests/storage/test_dir.h"
#include "net/roles/service/event_subscription.h"

namespace relgraph::net {
namespace {

using testing::TestDir;
using testing::TestServer;

DbOptions StreamDb() {
  DbOptions o = TestServer::NoRateLimit();
  o.wal_segment_bytes = 64 << 10;
  o.keep_all_wal = true;
  return o;
}

// Tiny segments, and each snapshot drops the WAL the previous one covered.
DbOptions ShortRetentionDb() {
  DbOptions o = StreamDb();
  o.keep_all_wal = false;
  o.keep_snapshots = 1;
  o.wal_segment_bytes = 4096;
  return o;
}

// The reference: the same events read embedded (checked against each call's outcome in
// tests/engine/stream/change_reader_test.cpp).
std::vector<WireEvent> Embedded(Db& db, uint64_t from, uint32_t kinds = kAllEventKinds) {
  auto reader = db.OpenChanges(from, kinds);
  REQUIRE(reader.ok());
  std::vector<WireEvent> out;
  while ((*reader)->next_lsn() <= db.last_lsn()) {
    auto n = (*reader)->Read(4096, [&](const ChangeEvent& e) { out.push_back(ToWire(e)); });
    REQUIRE(n.ok());
  }
  return out;
}

bool SameEvents(const std::vector<WireEvent>& a, const std::vector<WireEvent>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tie(a[i].lsn, a[i].kind, a[i].ts, a[i].a, a[i].b, a[i].friends, a[i].detail,
                 a[i].evicted) != std::tie(b[i].lsn, b[i].kind, b[i].ts, b[i].a, b[i].b,
                                           b[i].friends, b[i].detail, b[i].evicted)) {
      return false;
    }
  }
  return true;
}

// Random graph and feed writes from one connection, pipelined in batches.
void Write(const TestServer& ts, uint64_t seed, int batches, std::atomic<uint64_t>* next_post) {
  auto c = ts.Connect();
  std::mt19937_64 rng(seed);
  for (int b = 0; b < batches; ++b) {
    for (int i = 0; i < 100; ++i) {
      const uint64_t x = 1 + rng() % 200, y = 1 + rng() % 200;
      switch (rng() % 6) {
        case 0:
        case 1:
          c->Queue(FollowRequest{x, y, std::nullopt});
          break;
        case 2:
          c->Queue(UnfollowRequest{x, y});
          break;
        case 3:
          c->Queue(PublishRequest{x, next_post->fetch_add(1), uint8_t(rng() % 4), std::nullopt});
          break;
        case 4:
          c->Queue(MuteRequest{{x, y}});
          break;
        default:
          c->Queue(HideRequest{{x, y}});
      }
    }
    REQUIRE(c->Flush().ok());
  }
}

// Collects events through net::Subscribe until told to stop.
struct Collector {
  Collector(const TestServer& ts, SubscriberOptions o) {
    o.client = ts.ClientOptions();
    o.retry_min = std::chrono::milliseconds(10);
    thread = std::thread([this, o] {
      status = Subscribe(
          o,
          [this](const WireEvent& e) {
            std::lock_guard lock(mu);
            events.push_back(e);
            return true;
          },
          &stop);
    });
  }
  ~Collector() { Stop(); }
  void Stop() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
  // Waits until an event at or past `lsn` arrived (or 20 s).
  bool WaitFor(uint64_t lsn) {
    for (int i = 0; i < 2000; ++i) {
      {
        std::lock_guard lock(mu);
        if (!events.empty() && events.back().lsn >= lsn) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  std::vector<WireEvent> Events() {
    std::lock_guard lock(mu);
    return events;
  }

  std::mutex mu;
  std::vector<WireEvent> events;
  std::atomic<bool> stop{false};
  Status status;
  std::thread thread;
};

// A subscriber on a raw socket with a small receive buffer (set before connecting, so the
// window stays small): it subscribes, then reads only when told to.
int RawSubscriber(const TestServer& ts, const SubscribeRequest& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int small = 4096;
  REQUIRE(::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)) == 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(ts.server->port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  const std::string out = testing::HelloFrame() + testing::RequestFrame(2, request);
  REQUIRE(::send(fd, out.data(), out.size(), 0) == ssize_t(out.size()));
  return fd;
}

// Reads frames from fd, calling fn(frame) for each, until fn returns false.
void ReadFrames(int fd, const std::function<bool(const net::Frame&)>& fn) {
  std::string in;
  char buf[1 << 16];
  for (;;) {
    for (;;) {
      DecodeResult r = DecodeFrame(in, 1 << 24);
      if (r.state != DecodeState::kFrame) break;
      const bool more = fn(r.frame);
      in.erase(0, r.frame.size);
      if (!more) return;
    }
    pollfd p{fd, POLLIN, 0};
    REQUIRE(::poll(&p, 1, 10000) == 1);
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    REQUIRE(n > 0);
    in.append(buf, size_t(n));
  }
}

TEST_CASE("subscribe: writers on four connections, two subscribers see every change once") {
  TestDir dir;
  ServerOptions options;
  options.io_threads = 2;
  TestServer ts(options, dir.path(), StreamDb());
  SubscriberOptions all;
  all.from = SubscribeFrom::kLsn;
  all.lsn = 1;
  Collector everything(ts, all);
  SubscriberOptions some;
  some.from = SubscribeFrom::kNow;
  some.kinds = (1u << 1) | (1u << 4);  // follow, publish
  Collector follows_and_posts(ts, some);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // "now" is before the writes
  const uint64_t start = ts.db->last_lsn() + 1;

  std::atomic<uint64_t> next_post{1};
  std::vector<std::thread> writers;
  for (int w = 0; w < 4; ++w) writers.emplace_back([&, w] { Write(ts, 100 + w, 50, &next_post); });
  for (std::thread& t : writers) t.join();
  const uint64_t last = ts.db->last_lsn();
  REQUIRE(last > 5000);
  const std::vector<WireEvent> want_all = Embedded(*ts.db, 1);
  const std::vector<WireEvent> want_some = Embedded(*ts.db, start, some.kinds);
  REQUIRE(everything.WaitFor(want_all.back().lsn));
  REQUIRE(follows_and_posts.WaitFor(want_some.back().lsn));
  everything.Stop();
  follows_and_posts.Stop();
  CHECK(everything.status.ok());
  CHECK(SameEvents(everything.Events(), want_all));
  CHECK(SameEvents(follows_and_posts.Events(), want_some));
}

TEST_CASE("subscribe: a subscriber resumes after the server restarts, missing nothing") {
  TestDir dir;
  std::unique_ptr<Db> db;
  std::unique_ptr<CommandService> service;
  std::unique_ptr<Server> server;
  uint16_t port = 0;
  // Opens the data directory, writes `n` follows embedded (no server listening), then serves.
  auto start = [&](uint64_t base, int n) {
    auto opened = Db::Open(dir.path(), StreamDb());
    REQUIRE(opened.ok());
    db = std::move(*opened);
    for (int i = 0; i < n; ++i) REQUIRE(db->Follow(base + i, 7).ok());
    service = std::make_unique<CommandService>(db.get());
    ServerOptions options;
    options.port = port;
    server = std::make_unique<Server>(options, service.get());
    REQUIRE(server->Start().ok());
    port = server->port();
  };
  auto stop_server = [&] {
    server->Shutdown();
    REQUIRE(server->Wait().ok());  // closes the Db
    server.reset();
    service.reset();
    db.reset();
  };
  auto write_some = [&](uint64_t base) {
    ClientOptions co;
    co.port = port;
    auto c = Client::Connect(co);
    REQUIRE(c.ok());
    for (uint64_t i = 0; i < 500; ++i) REQUIRE((*c)->Follow(base + i, base + i + 1).ok());
  };
  start(100000, 0);

  SubscriberOptions o;
  o.client.port = port;
  o.from = SubscribeFrom::kLsn;
  o.lsn = 1;
  o.retry_min = std::chrono::milliseconds(10);
  std::mutex mu;
  std::vector<WireEvent> got;
  std::atomic<bool> stop{false};
  std::atomic<int> subscribes{0};
  SubscriberEvents hooks;
  hooks.on_subscribed = [&](const SubscribeReply&) { ++subscribes; };
  Status consumer_status;
  std::thread consumer([&] {
    consumer_status = Subscribe(
        o,
        [&](const WireEvent& e) {
          std::lock_guard lock(mu);
          got.push_back(e);
          return true;
        },
        &stop, hooks);
  });
  write_some(1000);
  for (uint64_t round = 0; round < 2; ++round) {
    // The subscriber is connected (maybe behind); the server goes away, the data directory
    // takes writes while none listens, and a new server comes up on the same port.
    stop_server();
    start(5000 + round * 1000, 300);
    write_some(10000 + round * 1000);
    // The subscriber must resume on this server before it goes away too; otherwise a slow
    // reconnect would skip it and the test would prove one resumption instead of two.
    const int want = static_cast<int>(round) + 2;
    for (int i = 0; i < 2000 && subscribes < want; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(subscribes >= want);
  }
  const uint64_t last = db->last_lsn();
  REQUIRE(last == 500 * 3 + 300 * 2);
  for (int i = 0; i < 2000; ++i) {
    {
      std::lock_guard lock(mu);
      if (!got.empty() && got.back().lsn >= last) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop = true;
  consumer.join();
  CHECK(consumer_status.ok());
  CHECK(subscribes >= 3);
  CHECK(SameEvents(got, Embedded(*db, 1)));
  stop_server();
}

TEST_CASE("subscribe: a subscriber that stops reading is paused; writers and memory are not") {
  TestDir dir;
  TestServer ts({}, dir.path(), StreamDb());
  const int fd = RawSubscriber(ts, SubscribeRequest{SubscribeFrom::kLsn, 1, 0, ""});
  auto c = ts.Connect();
  for (uint64_t batch = 0; batch < 100; ++batch) {
    for (uint64_t i = 0; i < 2000; ++i) {
      c->Queue(FollowRequest{1 + batch * 2000 + i, 1000000 + i % 997, std::nullopt});
    }
    REQUIRE(c->Flush().ok());
  }
  const uint64_t last = ts.db->last_lsn();
  REQUIRE(last == 200000);  // ~8.6 MB of events the subscriber has not read
  auto info = c->Info();
  REQUIRE(info.ok());
  // Its connection holds about the low-water mark plus one frame, not the backlog.
  CHECK(*info->Get("connection_bytes") < (3u << 20));

  // It reads now, and gets everything, in order.
  uint64_t next = 1;
  int replies = 0;
  ReadFrames(fd, [&](const net::Frame& f) {
    if (f.opcode != uint8_t(Opcode::kEvents)) {
      ++replies;  // HELLO and SUBSCRIBE replies come first
      CHECK(next == 1);
      return true;
    }
    EventsBody body;
    REQUIRE(WireDecode(f.body, &body, "events").ok());
    for (const WireEvent& e : body.events) CHECK(e.lsn == next++);
    CHECK(body.next_lsn == next);
    return next <= last;
  });
  CHECK(replies == 2);
  ::close(fd);
}

TEST_CASE("subscribe: every bad request gets its error and the connection stays usable") {
  TestDir dir;
  TestServer ts({}, dir.path(), ShortRetentionDb());
  auto c = ts.Connect();
  for (uint64_t i = 1; i <= 2000; ++i) REQUIRE(c->Follow(i, i + 1).ok());
  REQUIRE(c->Snapshot().ok());
  REQUIRE(c->Follow(1, 3).ok());
  REQUIRE(c->Snapshot().ok());

  auto code = [&](const SubscribeRequest& r) { return c->StartSubscription(r).status(); };
  CHECK(code({SubscribeFrom::kLsn, 0, 0, ""}).code() == Code::kInvalidArgument);
  CHECK(code({SubscribeFrom::kNow, 5, 0, ""}).code() == Code::kInvalidArgument);
  CHECK(code({SubscribeFrom(7), 0, 0, ""}).code() == Code::kInvalidArgument);
  CHECK(code({SubscribeFrom::kNow, 0, 1, ""}).code() == Code::kInvalidArgument);
  CHECK(code({SubscribeFrom::kNow, 0, 1u << 10, ""}).code() == Code::kInvalidArgument);
  CHECK(code({SubscribeFrom::kNow, 0, 1u << 19, ""}).code() == Code::kInvalidArgument);
  CHECK(code({SubscribeFrom::kLsn, ts.db->last_lsn() + 2, 0, ""}).code() == Code::kInvalidArgument);
  const Status expired = code({SubscribeFrom::kLsn, 1, 0, ""});
  CHECK(expired.code() == Code::kLsnExpired);
  CHECK(expired.detail() > 1);
  CHECK(expired.message().find(std::to_string(expired.detail())) != std::string::npos);
  // A client may not send EVENTS.
  std::vector<RawReply> replies;
  REQUIRE(c->RoundTrip(testing::Frame(9, Opcode::kEvents, ""), 1, &replies).ok());
  CHECK(replies[0].status.code() == Code::kProtocolError);
  REQUIRE(c->Ping().ok());

  // From the oldest kept LSN it works; a second SUBSCRIBE on that connection does not.
  auto ok = c->StartSubscription({SubscribeFrom::kLsn, uint64_t(expired.detail()), 0, ""});
  REQUIRE(ok.ok());
  CHECK(ok->first_lsn == uint64_t(expired.detail()));
  CHECK(ok->newest_lsn == ts.db->last_lsn());
  CHECK(code({SubscribeFrom::kNow, 0, 0, ""}).code() == Code::kInvalidArgument);
  REQUIRE(c->Ping().ok());  // replies and events share the connection
  uint64_t next = ok->first_lsn;
  while (next <= ts.db->last_lsn()) {
    auto events = c->NextEvents(std::chrono::seconds(5));
    REQUIRE(events.ok());
    for (const WireEvent& e : events->events) CHECK(e.lsn == next++);
  }

  TestServer memory;  // no data directory, no stream
  auto m = memory.Connect();
  CHECK(m->StartSubscription({SubscribeFrom::kNow, 0, 0, ""}).status().code() ==
        Code::kInvalidArgument);
}

TEST_CASE("subscribe: a subscriber that falls behind retention gets lsn_expired as EVENTS") {
  TestDir dir;
  TestServer ts({}, dir.path(), ShortRetentionDb());
  const int fd = RawSubscriber(ts, SubscribeRequest{SubscribeFrom::kLsn, 1, 0, ""});
  auto c = ts.Connect();
  // The subscriber reads nothing while the WAL moves on and snapshots drop it.
  for (uint64_t round = 0; round < 20; ++round) {
    for (uint64_t i = 0; i < 5000; ++i) {
      c->Queue(FollowRequest{1 + round * 5000 + i, 1000000 + i % 997, std::nullopt});
    }
    REQUIRE(c->Flush().ok());
    REQUIRE(c->Snapshot().ok());
  }
  uint64_t next = 1;
  Status ended;
  ReadFrames(fd, [&](const net::Frame& f) {
    if (f.opcode != uint8_t(Opcode::kEvents)) return true;
    const Status s = StatusFromReply(f);
    if (!s.ok()) {
      ended = s;
      return false;
    }
    EventsBody body;
    REQUIRE(WireDecode(f.body, &body, "events").ok());
    for (const WireEvent& e : body.events) REQUIRE(e.lsn == next++);
    return true;
  });
  REQUIRE(ended.code() == Code::kLsnExpired);
  CHECK(ended.detail() > int64_t(next));  // the oldest kept LSN: past where it stood
  // The connection serves on.
  const std::string ping = testing::Frame(3, Opcode::kPing, "");
  REQUIRE(::send(fd, ping.data(), ping.size(), 0) == ssize_t(ping.size()));
  bool pong = false;
  ReadFrames(fd, [&](const net::Frame& f) {
    pong = f.opcode == uint8_t(Opcode::kPing) && f.request_id == 3;
    return !pong && f.opcode == uint8_t(Opcode::kEvents);
  });
  CHECK(pong);
  ::close(fd);
}

TEST_CASE("fetch_snapshot: a new replica loads the newest snapshot and follows the stream") {
  TestDir dir, replica_dir;
  TestServer ts({}, dir.path(), StreamDb());
  auto c = ts.Connect();
  CHECK(c->FetchSnapshot(replica_dir.path() + "/x").status().code() == Code::kNotFound);
  std::mt19937_64 rng(9);
  auto churn = [&](int n) {
    for (int i = 0; i < n; ++i) {
      const uint64_t a = 1 + rng() % 300, b = 1 + rng() % 300;
      if (rng() % 4 == 0) {
        c->Queue(UnfollowRequest{a, b});
      } else {
        c->Queue(FollowRequest{a, b, int64_t(1'000'000 + i)});
      }
    }
    REQUIRE(c->Flush().ok());
  };
  churn(20000);
  auto snap = c->Snapshot();
  REQUIRE(snap.ok());
  churn(5000);

  // A new consumer: the snapshot first, loaded as a data directory of its own...
  auto sub = ts.Connect();
  const std::string file = replica_dir.path() + "/snapshot-" +
                           std::string(20 - std::to_string(snap->lsn).size(), '0') +
                           std::to_string(snap->lsn) + ".rgs";
  auto fetched = sub->FetchSnapshot(file);
  REQUIRE_MESSAGE(fetched.ok(), fetched.status().ToString());
  CHECK(fetched->lsn == snap->lsn);
  CHECK(fetched->file_bytes == snap->file_bytes);
  REQUIRE(sub->Ping().ok());  // the transfer is over; the connection serves on
  auto replica = Db::Open(replica_dir.path(), TestServer::NoRateLimit());
  REQUIRE(replica.ok());
  CHECK((*replica)->recovery().snapshot_lsn == snap->lsn);

  // ...then the stream from the snapshot's LSN + 1, applied as the consumer's own writes.
  churn(5000);
  auto reply = sub->StartSubscription({SubscribeFrom::kLsn, fetched->lsn + 1, 0, ""});
  REQUIRE(reply.ok());
  uint64_t next = fetched->lsn + 1;
  while (next <= ts.db->last_lsn()) {
    auto events = sub->NextEvents(std::chrono::seconds(5));
    REQUIRE(events.ok());
    for (const WireEvent& e : events->events) {
      REQUIRE(e.lsn == next++);
      if (e.kind == EventKind::kFollow) {
        REQUIRE((*replica)->FollowAt(e.a, e.b, e.ts).ok());
      } else {
        REQUIRE(e.kind == EventKind::kUnfollow);
        REQUIRE((*replica)->Unfollow(e.a, e.b).ok());
      }
    }
  }
  auto edges = [](Db& db) {
    std::vector<std::tuple<UserId, UserId, TimestampMs>> v;
    db.Read([&](const Graph& g) {
      g.ForEachEdge([&](UserId a, UserId b, TimestampMs t) { v.emplace_back(a, b, t); });
      return 0;
    });
    std::sort(v.begin(), v.end());
    return v;
  };
  CHECK(edges(**replica) == edges(*ts.db));
  CHECK(edges(**replica).size() > 1000);
}

TEST_CASE("fetch_snapshot: in memory it is invalid_argument; clients may not send its data") {
  TestServer memory;
  auto m = memory.Connect();
  TestDir scratch;
  CHECK(m->FetchSnapshot(scratch.path() + "/s").status().code() == Code::kInvalidArgument);
  std::vector<RawReply> replies;
  REQUIRE(m->RoundTrip(testing::Frame(9, Opcode::kSnapshotData, ""), 1, &replies).ok());
  CHECK(replies[0].status.code() == Code::kProtocolError);
}

TEST_CASE("cursors over the wire: ACK, CURSORS, DELETE_CURSOR, SUBSCRIBE from a cursor") {
  TestDir dir;
  TestServer ts({}, dir.path(), StreamDb());
  auto c = ts.Connect();
  for (uint64_t i = 1; i <= 10; ++i) REQUIRE(c->Follow(i, i + 1).ok());
  REQUIRE(c->Ack("indexer", 4).ok());
  REQUIRE(c->Ack("cache", 10).ok());
  auto list = c->Cursors();
  REQUIRE(list.ok());
  REQUIRE(list->size() == 2);
  CHECK((*list)[0].name == "cache");
  CHECK((*list)[1].name == "indexer");
  CHECK((*list)[1].acked_lsn == 4);
  CHECK(!(*list)[1].expired);
  auto info = c->Info();
  REQUIRE(info.ok());
  CHECK(info->Get("cursors") == 2u);
  CHECK(info->Get("cursors_expired") == 0u);
  CHECK(info->Get("oldest_wal_lsn") == 1u);

  auto sub = ts.Connect();
  auto reply = sub->StartSubscription({SubscribeFrom::kCursor, 0, 0, "indexer"});
  REQUIRE(reply.ok());
  CHECK(reply->first_lsn == 5);  // after the ACK (LSNs 11 and 12 are the ACKs themselves)
  auto events = sub->NextEvents(std::chrono::seconds(5));
  REQUIRE(events.ok());
  REQUIRE(events->events.size() == 6);
  CHECK(events->events.front().lsn == 5);
  CHECK(events->events.back().lsn == 10);

  auto code = [&](const SubscribeRequest& r) {
    return ts.Connect()->StartSubscription(r).status().code();
  };
  CHECK(code({SubscribeFrom::kCursor, 0, 0, "nobody"}) == Code::kNotFound);
  CHECK(code({SubscribeFrom::kCursor, 3, 0, "indexer"}) == Code::kInvalidArgument);
  CHECK(code({SubscribeFrom::kLsn, 1, 0, "indexer"}) == Code::kInvalidArgument);
  CHECK(code({SubscribeFrom::kCursor, 0, 0, "bad name"}) == Code::kInvalidArgument);
  CHECK(c->Ack("indexer", 1000).code() == Code::kInvalidArgument);
  CHECK(c->Ack("", 1).code() == Code::kInvalidArgument);
  REQUIRE(c->DeleteCursor("cache").ok());
  CHECK(c->DeleteCursor("cache").code() == Code::kNotFound);
  CHECK(c->Cursors()->size() == 1);
}

TEST_CASE("cursors over the wire: ACK of LSN 0 on a fresh server holds the stream from LSN 1") {
  TestDir dir;
  TestServer ts({}, dir.path(), StreamDb());
  auto c = ts.Connect();
  REQUIRE(c->Ack("new", 0).ok());  // nothing logged yet: this ACK is LSN 1
  auto list = c->Cursors();
  REQUIRE(list.ok());
  REQUIRE(list->size() == 1);
  CHECK((*list)[0].name == "new");
  CHECK((*list)[0].acked_lsn == 0);
  CHECK(!(*list)[0].expired);
  for (uint64_t i = 1; i <= 3; ++i) REQUIRE(c->Follow(i, i + 1).ok());  // LSNs 2 to 4
  auto sub = ts.Connect();
  auto reply = sub->StartSubscription({SubscribeFrom::kCursor, 0, 0, "new"});
  REQUIRE(reply.ok());
  CHECK(reply->first_lsn == 1);
  auto events = sub->NextEvents(std::chrono::seconds(5));
  REQUIRE(events.ok());
  REQUIRE(events->events.size() == 3);
  CHECK(events->events.front().lsn == 2);
}

TEST_CASE("cursors over the wire: a named subscriber stops, resumes, and sees each event once") {
  TestDir dir;
  TestServer ts({}, dir.path(), StreamDb());
  auto c = ts.Connect();
  for (uint64_t i = 1; i <= 3000; ++i) c->Queue(FollowRequest{i, i + 1, std::nullopt});
  REQUIRE(c->Flush().ok());
  std::vector<uint64_t> seen;
  // Run 1: from LSN 1 under a new name, handle 1234 events, stop (the cursor is ACKed).
  SubscriberOptions o;
  o.client = ts.ClientOptions();
  o.from = SubscribeFrom::kLsn;
  o.lsn = 1;
  o.name = "consumer";
  o.ack_interval = std::chrono::milliseconds(1);
  REQUIRE(Subscribe(o, [&](const WireEvent& e) {
            seen.push_back(e.lsn);
            return seen.size() < 1234;
          }).ok());
  // Writes go on; run 2 resumes from the cursor and reads to the end.
  for (uint64_t i = 5000; i < 6000; ++i) c->Queue(FollowRequest{i, i + 1, std::nullopt});
  REQUIRE(c->Flush().ok());
  const uint64_t last = ts.db->last_lsn();
  o.from = SubscribeFrom::kCursor;
  o.lsn = 0;
  REQUIRE(Subscribe(o, [&](const WireEvent& e) {
            seen.push_back(e.lsn);
            return e.lsn < last;
          }).ok());
  // Every follow exactly once, in order; the LSNs missing are the ACK records.
  std::vector<uint64_t> follows;
  auto reader = ts.db->OpenChanges(1);
  REQUIRE(reader.ok());
  while ((*reader)->next_lsn() <= last) {
    REQUIRE((*reader)->Read(1000, [&](const ChangeEvent& e) { follows.push_back(e.lsn); }).ok());
  }
  CHECK(seen == follows);
  CHECK(seen.size() == 4000);
  CHECK(*ts.db->CursorResumeLsn("consumer") > last);
}

}  // namespace
}  // namespace relgraph::net
