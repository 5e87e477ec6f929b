// Placement (net/cluster/placement.h): the bucket hash, and the shard map's text form with
// its rules, checked on random maps (with and without a bucket move) and on each rule broken.
#include "net/cluster/placement.h"

#include <doctest.h>

#include <xxhash.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <random>
#include <set>

namespace relgraph::net {
namespace {

ShardMap RandomMap(std::mt19937_64& rng) {
  std::vector<ShardInfo> shards;
  std::set<uint32_t> ids;
  const int n = 1 + static_cast<int>(rng() % 5);
  while (static_cast<int>(ids.size()) < n) ids.insert(1 + static_cast<uint32_t>(rng() % 65535));
  for (uint32_t id : ids) {
    ShardInfo s{id, "10.0.0." + std::to_string(id % 250) + ":7707"};
    if (rng() % 2 == 0) {  // served by a replication group of 1 to 3 members
      s.group = "shard-" + std::to_string(id);
      s.members.push_back(s.address);
      for (int k = 1 + static_cast<int>(rng() % 3); --k > 0;) {
        s.members.push_back("10.1." + std::to_string(k) + "." + std::to_string(id % 250) + ":7707");
      }
    }
    shards.push_back(s);
  }
  ShardMap m;
  m.buckets = 1 + static_cast<uint32_t>(rng() % 300);
  m.shards = shards;
  for (uint32_t b = 0; b < m.buckets; ++b) {
    // Runs of one owner, as real maps have, and single buckets.
    m.owner.push_back(b > 0 && rng() % 4 != 0 ? m.owner[b - 1] : shards[rng() % n].id);
  }
  if (n >= 2 && rng() % 2 == 0) {
    BucketMove mv;
    mv.first = static_cast<uint32_t>(rng() % m.buckets);
    mv.last = mv.first + static_cast<uint32_t>(rng() % (m.buckets - mv.first));
    mv.from = shards[rng() % n].id;
    do {
      mv.to = shards[rng() % n].id;
    } while (mv.to == mv.from);
    mv.phase = static_cast<MovePhase>(1 + rng() % 3);
    mv.id = 1 + rng();
    // A flip time after the prepare, or none (a map written before it was recorded).
    if (mv.phase != MovePhase::kPrepare && rng() % 3 != 0) mv.flipped_ms = 1 + rng() % (1ull << 50);
    for (uint32_t b = mv.first; b <= mv.last; ++b) {
      m.owner[b] = mv.phase == MovePhase::kPrepare ? mv.from : mv.to;
    }
    m.move = mv;
  }
  return m;
}

TEST_CASE("the bucket of a user is a fixed hash") {
  // These values are the documented hash (docs/cluster.md): changing them moves every user.
  CHECK(BucketOf(1, 4096) == 2350);
  CHECK(BucketOf(2, 4096) == 579);
  CHECK(BucketOf(1000, 4096) == 1421);
  CHECK(BucketOf(uint64_t{1} << 40, 4096) == 3190);
  std::vector<uint32_t> seen(16, 0);
  for (uint64_t u = 1; u <= 16000; ++u) ++seen[BucketOf(u, 16)];
  for (uint32_t count : seen) CHECK((count > 800 && count < 1200));  // spread evenly
  for (uint64_t u : {1ull, 77ull, 1ull << 40, ~0ull}) CHECK(BucketOf(u, 1) == 0);
}

TEST_CASE("the bucket test vectors of docs/cluster.md are libxxhash's") {
  // Every client checks its own hash against this table; here it is checked against the C
  // library, so a wrong row cannot mislead them.
  std::ifstream doc(RELGRAPH_DOCS_DIR "/cluster.md");
  REQUIRE(doc.good());
  std::string line;
  bool in_table = false;
  int rows = 0;
  while (std::getline(doc, line)) {
    if (line.rfind("| user id | XXH3-64 | bucket of 1024 |", 0) == 0) in_table = true;
    if (!in_table || line.empty() || line.find("---") != std::string::npos) {
      if (in_table && line.empty()) break;
      continue;
    }
    uint64_t user = 0, hash = 0;
    uint32_t bucket = 0;
    if (std::sscanf(line.c_str(), "| %" SCNu64 " | %" SCNu64 " | %" SCNu32 " |", &user, &hash,
                    &bucket) != 3) {
      continue;  // the header
    }
    unsigned char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(user >> (8 * i));
    CHECK(XXH3_64bits(bytes, 8) == hash);
    CHECK(BucketOf(user, 1024) == bucket);
    ++rows;
  }
  CHECK(rows >= 8);
}

TEST_CASE("random maps survive their text form, moves included") {
  std::mt19937_64 rng(7);
  int with_move = 0;
  for (int i = 0; i < 2000; ++i) {
    const ShardMap m = RandomMap(rng);
    REQUIRE_MESSAGE(ValidateShardMap(m).ok(), ValidateShardMap(m).ToString());
    auto parsed = ParseShardMap(EncodeShardMap(m));
    REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
    CHECK(parsed->buckets == m.buckets);
    CHECK(parsed->shards == m.shards);
    CHECK(parsed->owner == m.owner);
    CHECK(parsed->move == m.move);
    with_move += m.move.has_value();
    for (uint64_t u = 1; u < 50; ++u) {
      CHECK(parsed->Moving(u) == (m.move && m.move->Covers(BucketOf(u, m.buckets))));
    }
  }
  CHECK(with_move > 500);
}

ShardMap TwoShards() {
  auto m = EvenShardMap({{1, "127.0.0.1:7701"}, {2, "127.0.0.1:7702"}}, 8);
  REQUIRE(m.ok());
  return *m;
}

TEST_CASE("a shard's group line: members, the group's name, and the rules broken") {
  auto m = ParseShardMap(
      "relgraph-shard-map 1\nbuckets 4\nshard 1 a:1,b:2,c:3 group s1\nshard 2 d:4\nowner 0-3 1\n");
  REQUIRE_MESSAGE(m.ok(), m.status().ToString());
  CHECK(m->shards[0].address == "a:1");
  CHECK(m->shards[0].group == "s1");
  CHECK(m->shards[0].Addresses() == std::vector<std::string>{"a:1", "b:2", "c:3"});
  CHECK(m->shards[1].Addresses() == std::vector<std::string>{"d:4"});
  CHECK(m->shards[1].group.empty());
  for (const char* bad : {"shard 1 a:1,b:2\n",             // members without a group
                          "shard 1 a:1,a:1 group s1\n",    // a member twice
                          "shard 1 a:1,b group s1\n",      // not host:port
                          "shard 1 a:1 group bad.name\n",  // not a group name
                          "shard 1 a:1 crowd s1\n"}) {
    auto parsed =
        ParseShardMap(std::string("relgraph-shard-map 1\nbuckets 4\n") + bad + "owner 0-3 1\n");
    CHECK_MESSAGE(!parsed.ok(), bad);
  }
  ShardMap broken = TwoShards();
  broken.shards[0].group = "g";
  broken.shards[0].members = {"127.0.0.1:9999"};  // not starting with the shard's address
  CHECK(ValidateShardMap(broken).message().find("must start with") != std::string::npos);
}

TEST_CASE("a move line that breaks a rule is refused, naming it") {
  ShardMap m = TwoShards();  // buckets 0-3 on 1, 4-7 on 2
  m.move = BucketMove{0, 1, 1, 2, MovePhase::kPrepare, 9};
  CHECK(ValidateShardMap(m).ok());
  auto refused = [&](const std::string& words) {
    const Status s = ValidateShardMap(m);
    CHECK_MESSAGE(s.code() == Code::kInvalidArgument, s.ToString());
    CHECK_MESSAGE(s.message().find(words) != std::string::npos, s.message());
  };
  m.move->phase = MovePhase::kFlip;  // owners still the old ones
  refused("belongs to shard 1, expected shard 2 in phase flip");
  m.owner[0] = m.owner[1] = 2;
  CHECK(ValidateShardMap(m).ok());
  m.move->to = 1;
  refused("two different shards");
  m.move->to = 3;
  refused("two different shards");
  m.move->to = 2;
  m.move->id = 0;
  refused("id 0");
  m.move->id = 9;
  m.move->last = 8;
  refused("outside 0-7");

  const std::string good = EncodeShardMap(TwoShards());
  auto parse_refused = [&](const std::string& text, const std::string& words) {
    auto r = ParseShardMap(text);
    REQUIRE(!r.ok());
    CHECK_MESSAGE(r.status().message().find(words) != std::string::npos, r.status().message());
  };
  parse_refused(good + "move 0-1 1 2 sideways 4\n", "move phase 'sideways'");
  parse_refused(good + "move 0-1 1 2 prepare\n",
                "not a buckets, generation, shard, owner or move line");
  parse_refused(good + "move 0-1 1 2 prepare 4\nmove 2-2 1 2 prepare 5\n", "a second move line");
  parse_refused(good + "move 0-9 1 2 prepare 4\n", "outside 0-7");
  parse_refused(good + "move 0-1 1 x prepare 4\n",
                "expected 'move FIRST-LAST FROM TO PHASE ID [FLIPPED_MS]'");
  parse_refused(good + "move 0-1 1 2 flip 4\n", "expected shard 2 in phase flip");
  CHECK(ParseShardMap(good + "move 0-1 1 2 prepare 4\n").ok());
  parse_refused(good + "move 0-1 1 2 prepare 4 1700000000000\n", "flip time in phase prepare");
  parse_refused(good + "move 0-1 1 2 prepare 4 5 6\n",
                "not a buckets, generation, shard, owner or move line");
}

TEST_CASE("a move line keeps its flip time; one written without it still reads") {
  ShardMap m = TwoShards();
  m.owner[0] = m.owner[1] = 2;
  // As maps were written before the flip's time was recorded: six words.
  const std::string old_map = EncodeShardMap(m) + "move 0-1 1 2 copy 4\n";
  auto parsed = ParseShardMap(old_map);
  REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
  CHECK(parsed->move->flipped_ms == 0);
  CHECK(parsed->move->phase == MovePhase::kCopy);
  CHECK(EncodeShardMap(*parsed) == old_map);
  parsed->move->flipped_ms = 1700000000123;
  const std::string text = EncodeShardMap(*parsed);
  CHECK(text.find("move 0-1 1 2 copy 4 1700000000123\n") != std::string::npos);
  auto again = ParseShardMap(text);
  REQUIRE(again.ok());
  CHECK(again->move->flipped_ms == 1700000000123);
}

TEST_CASE("a map's generation survives its text form; generation 1 is not written") {
  std::mt19937_64 rng(8);
  for (int i = 0; i < 500; ++i) {
    ShardMap m = RandomMap(rng);
    m.generation = rng() % 2 == 0 ? 1 : 2 + rng() % 1000;
    const std::string text = EncodeShardMap(m);
    CHECK((text.find("\ngeneration ") != std::string::npos) == (m.generation > 1));
    auto parsed = ParseShardMap(text);
    REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
    CHECK(parsed->generation == m.generation);
    CHECK(parsed->owner == m.owner);
  }
  const std::string good = EncodeShardMap(TwoShards());
  for (const char* bad :
       {"generation 1\n", "generation 0\n", "generation x\n", "generation 3\ngeneration 4\n"}) {
    auto r = ParseShardMap(good + bad);
    CHECK_MESSAGE(!r.ok(), bad);
  }
}

TEST_CASE("the digest tells maps apart by what they say, not by version or generation") {
  std::mt19937_64 rng(9);
  for (int i = 0; i < 500; ++i) {
    ShardMap a = RandomMap(rng);
    ShardMap b = a;
    b.version = a.version + 1 + rng() % 100;
    b.generation = a.generation + 1 + rng() % 5;
    CHECK(ShardMapDigest(a) == ShardMapDigest(b));
    // One bucket to another shard, when there is another and no move pins it.
    if (a.shards.size() < 2 || a.move) continue;
    const uint32_t bucket = static_cast<uint32_t>(rng() % a.buckets);
    b.owner[bucket] = a.owner[bucket] == a.shards[0].id ? a.shards[1].id : a.shards[0].id;
    CHECK(ShardMapDigest(a) != ShardMapDigest(b));
  }
  ShardMap a = TwoShards(), b = TwoShards();
  b.shards[1].address = "127.0.0.1:7799";
  CHECK(ShardMapDigest(a) != ShardMapDigest(b));
}

TEST_CASE("newer is by generation first, then version, whatever the revisions") {
  // (generation, version) pairs in order: a restore (generation 2) comes after revision 40 of
  // generation 1 although its revisions restart at 1.
  const std::vector<std::pair<uint64_t, uint64_t>> order = {{1, 1}, {1, 2}, {1, 40}, {2, 1},
                                                            {2, 3}, {3, 1}, {3, 99}};
  for (size_t i = 0; i < order.size(); ++i) {
    for (size_t j = 0; j < order.size(); ++j) {
      ShardMap a = TwoShards(), b = TwoShards();
      a.generation = order[i].first;
      a.version = order[i].second;
      b.generation = order[j].first;
      b.version = order[j].second;
      CHECK_MESSAGE(a.NewerThan(b) == (i > j), i << " vs " << j);
    }
  }
}

TEST_CASE(
    "the versioned form (a shard's saved map, export-map's file) keeps version and generation") {
  std::mt19937_64 rng(10);
  for (int i = 0; i < 300; ++i) {
    ShardMap m = RandomMap(rng);
    m.version = rng() % 1000;
    m.generation = 1 + rng() % 3;
    const std::string text = EncodeVersionedShardMap(m);
    CHECK(text.rfind("relgraph-cluster-map 1\nversion " + std::to_string(m.version) + "\n", 0) ==
          0);
    auto parsed = ParseVersionedShardMap(text);
    REQUIRE_MESSAGE(parsed.ok(), parsed.status().ToString());
    CHECK(parsed->version == m.version);
    CHECK(parsed->generation == m.generation);
    CHECK(ShardMapDigest(*parsed) == ShardMapDigest(m));
  }
  const std::string map = EncodeShardMap(TwoShards());
  CHECK(ParseVersionedShardMap(map).status().message().find("does not start with") !=
        std::string::npos);
  CHECK(ParseVersionedShardMap("relgraph-cluster-map 1\nversion -1\n" + map)
            .status()
            .message()
            .find("version N") != std::string::npos);
  CHECK(ParseVersionedShardMap("relgraph-cluster-map 1\nversion 3\n").status().code() ==
        Code::kInvalidArgument);
}

}  // namespace
}  // namespace relgraph::net
