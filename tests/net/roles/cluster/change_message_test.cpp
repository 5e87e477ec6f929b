// The change message codec (net/roles/cluster/change_message.h): random messages round-trip, and
// every cut, a wrong version, LSNs out of order and bytes after the records are refused
// with kInvalidArgument naming what is wrong.
#include "net/roles/cluster/change_message.h"

#include <doctest.h>

#include <random>
#include <string>
#include <vector>

namespace relgraph {
namespace {

struct Built {
  std::string bytes;
  std::vector<std::pair<uint64_t, std::string>> records;  // lsn, payload
  std::vector<uint8_t> types;
};

Built Build(std::mt19937_64& rng, uint32_t count) {
  Built b;
  StartChangeMessage(7, &b.bytes);
  uint64_t lsn = rng() % 100;
  for (uint32_t i = 0; i < count; ++i) {
    lsn += 1 + rng() % 5;
    // Short records mostly; now and then a back-fill's size, past what one byte could say.
    const size_t len = rng() % 8 == 0 ? 300 + rng() % 70'000 : rng() % 40;
    std::string payload(len, '\0');
    for (char& c : payload) c = static_cast<char>(rng());
    const uint8_t type = static_cast<uint8_t>(1 + rng() % 20);
    AppendChangeRecord(lsn, type, payload, &b.bytes);
    b.records.push_back({lsn, payload});
    b.types.push_back(type);
  }
  FinishChangeMessage(count, &b.bytes);
  return b;
}

TEST_CASE("change messages round-trip, payloads of any length") {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 200; ++round) {
    const Built b = Build(rng, static_cast<uint32_t>(rng() % 12));
    auto m = DecodeChangeMessage(b.bytes);
    REQUIRE_MESSAGE(m.ok(), m.status().ToString());
    CHECK(m->origin == 7);
    REQUIRE(m->records.size() == b.records.size());
    for (size_t i = 0; i < b.records.size(); ++i) {
      CHECK(m->records[i].lsn == b.records[i].first);
      CHECK(m->records[i].type == b.types[i]);
      CHECK(m->records[i].payload == b.records[i].second);
    }
  }
}

TEST_CASE("change messages refuse damage") {
  std::mt19937_64 rng(6);
  const Built b = Build(rng, 5);
  for (size_t len = 0; len < b.bytes.size(); len += 1 + len / 50) {
    auto m = DecodeChangeMessage(std::string_view(b.bytes).substr(0, len));
    CHECK_MESSAGE(m.status().code() == Code::kInvalidArgument, "cut at " << len);
  }
  std::string v1 = b.bytes;
  v1[0] = 1;
  CHECK(DecodeChangeMessage(v1).status().message().find("version 1") != std::string::npos);
  CHECK(DecodeChangeMessage(b.bytes + "x").status().message().find("after the records") !=
        std::string::npos);
  std::string order;
  StartChangeMessage(1, &order);
  AppendChangeRecord(9, 1, "a", &order);
  AppendChangeRecord(9, 1, "b", &order);
  FinishChangeMessage(2, &order);
  CHECK(DecodeChangeMessage(order).status().message().find("LSN 9 after 9") != std::string::npos);
}

}  // namespace
}  // namespace relgraph
