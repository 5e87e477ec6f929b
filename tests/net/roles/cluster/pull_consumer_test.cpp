// PullConsumer (net/roles/cluster/pull_consumer.h) against a real nats-server: messages a
// pull delivered after its fetch had given up (the server paused meanwhile) come first, and a
// request the server never ends is given up; one message ends a waiting fetch; every message
// arrives once acknowledged and again when not; a consumer that is not there gives nothing,
// arguments out of range are errors. Randomized fetches with short timeouts lose nothing.
#include "net/roles/cluster/pull_consumer.h"

#include <doctest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "tests/storage/test_dir.h"
#include "tests/tools/child_process.h"
#include "tests/tools/nats_server_process.h"

namespace relgraph {
namespace {

// A nats-server with stream "T" on "t.>" and a durable consumer "c" of "t.1".
struct Fixture {
  explicit Fixture(int64_t ack_wait_ms = 30'000) : nats(dir.path()) {
    REQUIRE(natsConnection_ConnectTo(&nc, nats.url().c_str()) == NATS_OK);
    REQUIRE(natsConnection_JetStream(&js, nc, nullptr) == NATS_OK);
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    sc.Name = "T";
    const char* subjects[] = {"t.>"};
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    REQUIRE(js_AddStream(nullptr, js, &sc, nullptr, nullptr) == NATS_OK);
    jsConsumerConfig cc;
    jsConsumerConfig_Init(&cc);
    cc.Durable = "c";
    cc.FilterSubject = "t.1";
    cc.AckPolicy = js_AckExplicit;
    cc.AckWait = ack_wait_ms * 1'000'000;
    REQUIRE(js_AddConsumer(nullptr, js, "T", &cc, nullptr, nullptr) == NATS_OK);
  }
  ~Fixture() {
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
  }
  void Publish(int from, int to) {  // payloads "from".."to"
    for (int i = from; i <= to; ++i) {
      const std::string data = std::to_string(i);
      REQUIRE(js_Publish(nullptr, js, "t.1", data.data(), static_cast<int>(data.size()), nullptr,
                         nullptr) == NATS_OK);
      if (i % 7 == 0) {  // another subject between: the consumer's filter leaves it out
        REQUIRE(js_Publish(nullptr, js, "t.2", "x", 1, nullptr, nullptr) == NATS_OK);
      }
    }
  }
  std::unique_ptr<PullConsumer> Bind(const std::string& consumer = "c") {
    auto pull = PullConsumer::Bind(nc, "T", consumer);
    REQUIRE(pull.ok());
    return std::move(*pull);
  }

  testing::TestDir dir;
  testing::NatsServerProcess nats;
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
};

int PayloadOf(natsMsg* msg) {
  return std::stoi(std::string(natsMsg_GetData(msg), natsMsg_GetDataLength(msg)));
}

uint64_t DeliveriesOf(natsMsg* msg) {
  jsMsgMetaData* meta = nullptr;
  REQUIRE(natsMsg_GetMetaData(&meta, msg) == NATS_OK);
  const uint64_t n = meta->NumDelivered;
  jsMsgMetaData_Destroy(meta);
  return n;
}

TEST_CASE("pull consumer: the request bodies") {
  CHECK(PullConsumer::RequestBody(64, 0, true) == R"({"batch":64,"no_wait":true})");
  CHECK(PullConsumer::RequestBody(5, 190000000, false) == R"({"batch":5,"expires":190000000})");
}

TEST_CASE("pull consumer: answers that come after their fetch gave up come first, and whole") {
  Fixture f;
  f.Publish(1, 100);
  auto pull = f.Bind();
  // The server hangs: the first fetch's request waits in its socket and the fetch gives up;
  // the second waits on that request rather than send another.
  testing::PauseProcess(f.nats.pid);
  auto none = pull->Fetch(30, 50);
  auto none_either = pull->Fetch(34, 50);
  ::kill(f.nats.pid, SIGCONT);
  REQUIRE(none.ok());
  CHECK(none->empty());
  REQUIRE(none_either.ok());
  CHECK(none_either->empty());
  // Resumed, the server answers it: 30 messages nobody waits for. The next fetch, for more
  // than that (libnats' own fetch overran its array so), returns them and no more; the
  // following ones ask the consumer for the rest.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::vector<int> got;
  auto late = pull->Fetch(100, 1000);
  REQUIRE(late.ok());
  CHECK(late->size() == 30);
  for (natsMsg* m : late->messages()) {
    got.push_back(PayloadOf(m));
    REQUIRE(pull->Ack(m).ok());
  }
  while (got.size() < 100) {
    auto more = pull->Fetch(100, 1000);
    REQUIRE(more.ok());
    REQUIRE(!more->empty());
    for (natsMsg* m : more->messages()) {
      got.push_back(PayloadOf(m));
      REQUIRE(pull->Ack(m).ok());
    }
  }
  for (int i = 0; i < 100; ++i) CHECK(got[static_cast<size_t>(i)] == i + 1);
  auto after = pull->Fetch(10, 100);
  REQUIRE(after.ok());
  CHECK(after->empty());
}

TEST_CASE("pull consumer: a request the server never ends is given up, and a new one sent") {
  Fixture f;
  auto pull = f.Bind();
  // Paused past the point where its request should have ended, the server keeps it; the
  // consumer goes on serving through a new request.
  testing::PauseProcess(f.nats.pid);
  auto none = pull->Fetch(10, 50);
  std::this_thread::sleep_for(std::chrono::milliseconds(2300));
  ::kill(f.nats.pid, SIGCONT);
  REQUIRE(none.ok());
  CHECK(none->empty());
  f.Publish(1, 3);
  std::vector<int> got;
  for (int tries = 0; tries < 20 && got.size() < 3; ++tries) {
    auto fetched = pull->Fetch(10, 200);
    REQUIRE(fetched.ok());
    for (natsMsg* m : fetched->messages()) {
      got.push_back(PayloadOf(m));
      REQUIRE(pull->Ack(m).ok());
    }
  }
  CHECK(got == std::vector<int>{1, 2, 3});
}

TEST_CASE("pull consumer: a message not acknowledged comes again after the ack wait") {
  Fixture f(/*ack_wait_ms=*/300);
  f.Publish(1, 3);
  auto pull = f.Bind();
  auto first = pull->Fetch(10, 500);
  REQUIRE(first.ok());
  REQUIRE(first->size() == 3);
  REQUIRE(pull->Ack(first->messages()[0]).ok());
  REQUIRE(pull->Ack(first->messages()[2]).ok());  // 2 is not acknowledged
  std::vector<int> again;
  for (int tries = 0; tries < 20 && again.empty(); ++tries) {
    auto next = pull->Fetch(10, 200);
    REQUIRE(next.ok());
    for (natsMsg* m : next->messages()) {
      again.push_back(PayloadOf(m));
      CHECK(DeliveriesOf(m) == 2);
      REQUIRE(pull->Ack(m).ok());
    }
  }
  CHECK(again == std::vector<int>{2});
}

TEST_CASE("pull consumer: fewer messages than the batch come at once, not at the deadline") {
  Fixture f;
  f.Publish(1, 3);
  auto pull = f.Bind();
  const auto start = std::chrono::steady_clock::now();
  auto fetched = pull->Fetch(64, 5000);
  const auto waited = std::chrono::steady_clock::now() - start;
  REQUIRE(fetched.ok());
  CHECK(fetched->size() == 3);
  CHECK(waited < std::chrono::milliseconds(4000));  // the no_wait request's end ended it
}

TEST_CASE("pull consumer: one message published while a fetch waits ends the fetch") {
  Fixture f;
  auto pull = f.Bind();
  for (int round = 0; round < 3; ++round) {
    std::thread publisher([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      f.Publish(round + 1, round + 1);
    });
    const auto start = std::chrono::steady_clock::now();
    auto fetched = pull->Fetch(64, 2000);
    const auto waited = std::chrono::steady_clock::now() - start;
    publisher.join();
    REQUIRE(fetched.ok());
    REQUIRE(fetched->size() == 1);
    REQUIRE(pull->Ack(fetched->messages()[0]).ok());
    MESSAGE(std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() << " ms");
    CHECK(waited < std::chrono::milliseconds(1000));  // not the deadline
  }
}

TEST_CASE("pull consumer: a consumer that is not there, and arguments out of range") {
  Fixture f;
  auto missing = f.Bind("nobody");
  auto fetched = missing->Fetch(10, 300);
  REQUIRE(fetched.ok());  // nats-server 2.9 does not answer: the inbox asks for its state
  CHECK(fetched->empty());
  auto pull = f.Bind();
  CHECK(pull->Fetch(0, 100).status().code() == Code::kInvalidArgument);
  CHECK(pull->Fetch(65537, 100).status().code() == Code::kInvalidArgument);
  CHECK(pull->Fetch(10, 0).status().code() == Code::kInvalidArgument);
  CHECK(pull->Ack(nullptr).code() == Code::kInvalidArgument);
}

TEST_CASE("pull consumer: random batches and short timeouts lose nothing, repeat nothing") {
  Fixture f;
  constexpr int kMessages = 2000;
  std::thread publisher([&] { f.Publish(1, kMessages); });
  auto pull = f.Bind();
  std::mt19937_64 rng(11);
  std::map<int, int> seen;  // payload -> times fetched
  int fetches = 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (static_cast<int>(seen.size()) < kMessages && std::chrono::steady_clock::now() < give_up) {
    const int batch = 1 + static_cast<int>(rng() % 100);
    const int64_t timeout = 1 + static_cast<int64_t>(rng() % 5);  // late deliveries, often
    auto fetched = pull->Fetch(batch, timeout);
    REQUIRE(fetched.ok());
    REQUIRE(static_cast<int>(fetched->size()) <= batch);
    ++fetches;
    for (natsMsg* m : fetched->messages()) {
      ++seen[PayloadOf(m)];
      REQUIRE(pull->Ack(m).ok());
    }
  }
  publisher.join();
  REQUIRE(static_cast<int>(seen.size()) == kMessages);
  CHECK(seen.begin()->first == 1);
  CHECK(seen.rbegin()->first == kMessages);
  for (auto [payload, times] : seen) CHECK_MESSAGE(times == 1, payload);
  MESSAGE(fetches << " fetches");
}

}  // namespace
}  // namespace relgraph
