// The move message codec (net/roles/cluster/move_message.h): random states cut into pieces of
// every size come back whole from pieces in any order, repeated, and mixed with an earlier
// attempt that never finished; a flipped byte fails the hash; a bad header is refused.
#include "net/roles/cluster/move_message.h"

#include <doctest.h>

#include <algorithm>
#include <random>

namespace relgraph {
namespace {

std::vector<Db::MovedState> RandomState(std::mt19937_64& rng) {
  std::vector<Db::MovedState> state;
  const int n = static_cast<int>(rng() % 40);
  for (int i = 0; i < n; ++i) {
    // Mostly pair records; now and then a posts record larger than a piece.
    const size_t len = rng() % 10 == 0 ? 5000 + rng() % 20000 : rng() % 30;
    std::string payload(len, '\0');
    for (char& c : payload) c = static_cast<char>(rng());
    state.push_back({static_cast<WalRecordType>(1 + rng() % 22), payload});
  }
  return state;
}

bool Same(const std::vector<Db::MovedState>& a, const std::vector<Db::MovedState>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](auto& x, auto& y) {
           return x.type == y.type && x.payload == y.payload;
         });
}

TEST_CASE("a move's state comes back whole from its pieces, in any order") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 300; ++round) {
    const std::vector<Db::MovedState> state = RandomState(rng), stale = RandomState(rng);
    const size_t piece_bytes = 1 + rng() % 4000;
    std::vector<std::string> pieces = EncodeMovePieces(2, state, piece_bytes);
    // An earlier attempt that died half-way, with some pieces of it sent.
    std::vector<std::string> old = EncodeMovePieces(1, stale, piece_bytes);
    MoveAssembler assembler;
    if (old.size() > 1) {
      for (size_t i = 0; i + 1 < old.size(); ++i) REQUIRE(assembler.Add(old[i]).ok());
    }
    std::shuffle(pieces.begin(), pieces.end(), rng);
    for (size_t i = 0; i < pieces.size(); ++i) {
      CHECK(!assembler.Take().has_value());
      REQUIRE(assembler.Add(pieces[i]).ok());
      if (rng() % 3 == 0) REQUIRE(assembler.Add(pieces[i]).ok());  // redelivered
    }
    auto taken = assembler.Take();
    REQUIRE(taken.has_value());
    REQUIRE_MESSAGE(taken->ok(), taken->status().ToString());
    CHECK(Same(taken->value(), state));
  }
}

TEST_CASE("a damaged piece is refused or fails the hash") {
  std::mt19937_64 rng(12);
  std::vector<Db::MovedState> state;
  while (state.empty()) state = RandomState(rng);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::string> pieces = EncodeMovePieces(5, state, 700);
    std::string& p = pieces[rng() % pieces.size()];
    const size_t at = 25 + rng() % (p.size() - 25);  // past the header: the state's bytes
    p[at] = static_cast<char>(p[at] ^ (1 + rng() % 255));
    MoveAssembler assembler;
    for (const std::string& piece : pieces) REQUIRE(assembler.Add(piece).ok());
    auto taken = assembler.Take();
    REQUIRE(taken.has_value());
    REQUIRE(!taken->ok());
    CHECK(taken->status().code() == Code::kCorruption);
  }
  {
    // A damaged attempt, then a good one: the damage is reported once, the good one taken.
    std::vector<std::string> bad = EncodeMovePieces(6, state, 700);
    bad[0][30] = static_cast<char>(bad[0][30] ^ 0x10);
    MoveAssembler assembler;
    for (const std::string& piece : bad) REQUIRE(assembler.Add(piece).ok());
    for (const std::string& piece : EncodeMovePieces(7, state, 700)) {
      REQUIRE(assembler.Add(piece).ok());
    }
    auto first = assembler.Take();
    REQUIRE((first.has_value() && !first->ok()));
    CHECK(first->status().message().find("attempt 6") != std::string::npos);
    REQUIRE(assembler.Add(bad[0]).ok());  // redelivered: ignored
    auto second = assembler.Take();
    REQUIRE((second.has_value() && second->ok()));
    CHECK(Same(second->value(), state));
  }
  MoveAssembler assembler;
  const std::string good = EncodeMovePieces(5, state, 700)[0];
  CHECK(assembler.Add(good.substr(0, 24)).message().find("shorter than its 25-byte header") !=
        std::string::npos);
  std::string bad_version = good;
  bad_version[0] = 9;
  CHECK(assembler.Add(bad_version).message().find("version 9") != std::string::npos);
  std::string bad_index = good;
  bad_index[9] = 100;  // index 100 of fewer
  CHECK(assembler.Add(bad_index).message().find("numbered 100") != std::string::npos);
  REQUIRE(assembler.Add(good).ok());
  std::string other_hash = good;
  other_hash[17] = static_cast<char>(other_hash[17] ^ 1);
  CHECK(assembler.Add(other_hash).message().find("disagrees") != std::string::npos);
}

}  // namespace
}  // namespace relgraph
