#include <doctest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <set>
#include <tuple>

#include "engine/durable/graph_image_loader.h"
#include "engine/graph/clock.h"
#include "engine/graph/packed_list.h"
#include "storage/coding.h"

namespace relgraph {
namespace {

using Edges = std::set<std::tuple<UserId, UserId, TimestampMs>>;

Edges EdgesOf(const Graph& g) {
  Edges out;
  g.ForEachEdge([&](UserId a, UserId b, TimestampMs ts) { out.insert({a, b, ts}); });
  return out;
}

GraphOptions Options(ManualClock* clock, uint32_t chunk_entries) {
  GraphOptions o;
  o.rate_limit.enabled = false;
  o.clock = clock;
  o.fan_chunk_entries = chunk_entries;
  o.max_following = 100'000;  // lets one list span several records
  return o;
}

// Random follows, unfollows and (rarely) account removals among `users`; a few popular users
// get most follows, so fan lists chunk.
void Mutate(Graph& g, ManualClock& clock, std::mt19937_64& rng, int ops, uint64_t users) {
  for (int i = 0; i < ops; ++i) {
    clock.Advance(static_cast<TimestampMs>(rng() % 3));  // ties on time are common
    const UserId a = 1 + rng() % users;
    const UserId b = rng() % 3 == 0 ? 1 + rng() % 5 : 1 + rng() % users;
    const int dice = static_cast<int>(rng() % 100);
    if (dice < 70)
      g.Follow(a, b).status().IgnoreError();
    else if (dice < 99)
      g.Unfollow(a, b).status().IgnoreError();
    else
      g.RemoveUser(a).status().IgnoreError();
  }
}

// Feeds `records` to a loader in blocks cut at random record boundaries, as a snapshot's blocks.
Result<std::unique_ptr<Graph>> Load(const GraphOptions& o, std::string_view records, uint64_t users,
                                    uint64_t edges, std::mt19937_64& rng) {
  GraphImageLoader loader(o);
  RELGRAPH_RETURN_IF_ERROR(loader.Begin(users, edges));
  while (!records.empty()) {
    size_t block = 0;
    const int records_in_block = 1 + static_cast<int>(rng() % 8);
    for (int r = 0; r < records_in_block && block < records.size(); ++r) {
      const size_t n = ImageRecordBytes(records.substr(block));
      block = n == 0 ? records.size() : block + n;  // a malformed record: the rest, as one block
    }
    RELGRAPH_RETURN_IF_ERROR(loader.AddBlock(records.substr(0, block)));
    records.remove_prefix(block);
  }
  return loader.Finish();
}

// The image as versions 3 and 4 wrote it, and as the graph hands it out: u32 tags, the
// following list's three arrays and the fans' 10-byte entries as they sit in memory.
std::string RawImage(const Graph& g) {
  std::string records;
  g.AppendImageIds(0, g.image_users(), &records);
  for (size_t next = 0; next < g.image_users();)
    next = g.AppendImageLists(next, g.image_users(), 1000, &records);
  return records;
}

// Version-4 records with every list packed, as AddImageRecords hands them to a snapshot.
std::string Packed(std::string_view records) {
  std::string out;
  while (!records.empty()) {
    const size_t n = ImageRecordBytes(records);
    REQUIRE(n > 0);
    const auto tag = static_cast<ImageTag>(static_cast<uint8_t>(records[0]));
    if (tag == ImageTag::kFollowing || tag == ImageTag::kFans) {
      PackListRecord(records.substr(0, n), &out);
    } else {
      out.append(records.substr(0, n));
    }
    records.remove_prefix(n);
  }
  return out;
}

// The image of version 5.
std::string WholeImage(const Graph& g) {
  return Packed(RawImage(g));
}

// The version-4 image with every other list packed: one block may hold both kinds, and the
// raw records after a packed one are left unaligned.
std::string MixedImage(const Graph& g) {
  const std::string raw = RawImage(g);
  std::string mixed;
  int k = 0;
  for (std::string_view rest = raw; !rest.empty();) {
    const size_t n = ImageRecordBytes(rest);
    REQUIRE(n > 0);
    if (static_cast<ImageTag>(static_cast<uint8_t>(rest[0])) != ImageTag::kIds && k++ % 2 == 0)
      PackListRecord(rest.substr(0, n), &mixed);
    else
      mixed.append(rest.substr(0, n));
    rest.remove_prefix(n);
  }
  return mixed;
}

TEST_CASE("graph_image: a loaded image answers every query as the graph it came from") {
  // Version 5 (packed); versions 3 and 4 (raw), which must still load; and both mixed.
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    ManualClock clock;
    const GraphOptions o = Options(&clock, seed % 2 ? 4 : 256);
    Graph original(o);
    Mutate(original, clock, rng, 20'000, 150);
    if (seed == 1) {  // one list past a record's 65,536 entries, in both directions
      for (UserId b = 1000; b < 1000 + 70'000; ++b) {
        clock.Advance(1);
        REQUIRE(original.Follow(7, b).ok());
        REQUIRE(original.Follow(b, 8).ok());
      }
    }
    const std::string packed = WholeImage(original), raw = RawImage(original);
    CHECK(packed.size() < raw.size() * 3 / 4);
    for (const std::string& other : {raw, MixedImage(original)}) {
      auto also = Load(o, other, original.user_count(), original.edge_count(), rng);
      REQUIRE_MESSAGE(also.ok(), also.status().ToString());
      REQUIRE((*also)->CheckInvariants().ok());
      CHECK((*also)->Digest() == original.Digest());
    }
    auto loaded = Load(o, packed, original.user_count(), original.edge_count(), rng);
    REQUIRE_MESSAGE(loaded.ok(), loaded.status().ToString());
    const Graph& g = **loaded;
    REQUIRE(g.CheckInvariants().ok());
    CHECK(g.user_count() == original.user_count());
    CHECK(g.edge_count() == original.edge_count());
    CHECK(g.Digest() == original.Digest());
    PageRequest r;
    r.limit = kMaxPageLimit;
    for (UserId u = 1; u <= 150; ++u) {
      CAPTURE(u);
      REQUIRE(*g.GetCounts(u) == *original.GetCounts(u));
      REQUIRE(g.Fans(u, r)->entries == original.Fans(u, r)->entries);
      REQUIRE(g.Friends(u, r)->entries == original.Friends(u, r)->entries);
    }
  }
}

TEST_CASE(
    "graph_image: the image is the graph at BeginImage, whatever writes come between slices") {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed * 7919);
    ManualClock clock;
    const GraphOptions o = Options(&clock, seed % 2 ? 4 : 64);
    Graph g(o);
    Mutate(g, clock, rng, 10'000, 120);
    const Edges at_begin = EdgesOf(g);
    const uint64_t digest = g.Digest();
    g.BeginImage();
    const size_t users = g.image_users();
    const uint64_t edges = g.image_edges();
    std::string records;
    g.AppendImageIds(0, users, &records);
    // Writes between slices touch users already handed out, users still to come (their
    // pre-images must be kept) and users created after BeginImage (not in the image).
    for (size_t next = 0; next < users;) {
      next = g.AppendImageLists(next, next + 1 + rng() % 20, 1 + rng() % 500, &records);
      Mutate(g, clock, rng, static_cast<int>(rng() % 300), 160);
    }
    g.EndImage();
    Mutate(g, clock, rng, 500, 160);  // after EndImage: no effect on the image
    REQUIRE(g.CheckInvariants().ok());
    auto loaded = Load(o, Packed(records), users, edges, rng);
    REQUIRE_MESSAGE(loaded.ok(), loaded.status().ToString());
    REQUIRE((*loaded)->CheckInvariants().ok());
    CHECK(EdgesOf(**loaded) == at_begin);
    CHECK((*loaded)->Digest() == digest);
    CHECK(EdgesOf(g) != at_begin);  // the writes did change the live graph
  }
}

// Rewrites the first record with tag `tag` of an image through `edit`, which gets the record's
// bytes.
std::string EditFirst(std::string records, ImageTag tag, const std::function<void(char*)>& edit) {
  for (size_t at = 0; at < records.size();) {
    const size_t n = ImageRecordBytes(std::string_view(records).substr(at));
    REQUIRE(n > 0);
    if (DecodeFixed32(records.data() + at) == static_cast<uint32_t>(tag)) {
      edit(records.data() + at);
      return records;
    }
    at += n;
  }
  FAIL("no record with that tag");
  return records;
}

// A small graph of random changes, and the check that a damaged image of it is refused.
struct DamageCase {
  explicit DamageCase(uint64_t seed) : o(Options(&clock, 4)), g(o), rng(seed) {
    Mutate(g, clock, rng, 3'000, 60);
    users = g.user_count();
    edges = g.edge_count();
  }
  // Loading `records` against the footer's counts u and e fails with kCorruption naming `what`.
  void Refused(const std::string& records, const std::string& what, uint64_t u, uint64_t e) {
    CAPTURE(what);
    auto r = Load(o, records, u, e, rng);
    REQUIRE(r.status().code() == Code::kCorruption);
    CHECK_MESSAGE(r.status().message().find(what) != std::string::npos, r.status().message());
  }
  ManualClock clock;
  const GraphOptions o;
  Graph g;
  std::mt19937_64 rng;
  uint64_t users = 0, edges = 0;
};

TEST_CASE("graph_image: damaged version-4 images are refused with what is wrong, never loaded") {
  DamageCase c(5);
  const std::string good = RawImage(c.g);
  const uint64_t users = c.users, edges = c.edges;
  REQUIRE(Load(c.o, good, users, edges, c.rng).ok());
  auto refused = [&](const std::string& records, const std::string& what, uint64_t u, uint64_t e) {
    c.Refused(records, what, u, e);
  };
  refused(good, "user ids, the footer says", users + 1, edges);
  refused(good, "the footer says", users, edges + 1);
  refused(EditFirst(good, ImageTag::kIds, [](char* r) { std::memset(r + 12, 0, 8); }), "user id 0",
          users, edges);
  refused(EditFirst(good, ImageTag::kIds, [](char* r) { std::memcpy(r + 20, r + 12, 8); }),
          "has two internal ids", users, edges);
  refused(EditFirst(good, ImageTag::kFollowing,
                    [&](char* r) { EncodeFixed32(r + 16, static_cast<uint32_t>(users)); }),
          "names internal id", users, edges);
  refused(EditFirst(good, ImageTag::kFollowing,
                    [](char* r) { std::memcpy(r + 16, r + 4, 4); }),  // follows itself
          "names internal id", users, edges);
  refused(EditFirst(good, ImageTag::kFans, [](char* r) { EncodeFixed32(r + 4, 0xfffffff0); }),
          "list of internal id", users, edges);
  refused(EditFirst(good, ImageTag::kFollowing,
                    [](char* r) {  // claim one more entry than the record holds
                      EncodeFixed32(r + 8, DecodeFixed32(r + 8) + 1);
                    }),
          "entries", users, edges);
  refused(EditFirst(good, ImageTag::kFollowing, [](char* r) { EncodeFixed32(r, 9); }),
          "unknown kind", users, edges);
  // Out of order: swap the first record's first two followees' times.
  std::string swapped = good;
  for (size_t at = 0;;) {
    char* r = swapped.data() + at;
    const uint32_t count = DecodeFixed32(r + 12);
    if (DecodeFixed32(r) == static_cast<uint32_t>(ImageTag::kFollowing) && count >= 2 &&
        DecodeFixed32(r + 16 + 4 * count) != DecodeFixed32(r + 16 + 4 * count + 4)) {
      char lo[8];
      std::memcpy(lo, r + 16 + 4 * count, 8);
      std::memcpy(r + 16 + 4 * count, lo + 4, 4);
      std::memcpy(r + 16 + 4 * count + 4, lo, 4);
      break;
    }
    at += ImageRecordBytes(std::string_view(swapped).substr(at));
    REQUIRE(at < swapped.size());
  }
  refused(swapped, "out of order", users, edges);
  // A kMutual bit lost on one side.
  bool flipped = false;
  std::string one_sided = good;
  for (size_t at = 0; !flipped;) {
    char* r = one_sided.data() + at;
    if (DecodeFixed32(r) == static_cast<uint32_t>(ImageTag::kFollowing)) {
      const uint32_t count = DecodeFixed32(r + 12);
      for (uint32_t i = 0; i < count && !flipped; ++i) {
        char* hi = r + 16 + 8 * count + 2 * i;
        if ((static_cast<uint8_t>(hi[1]) & 0x80) != 0) {
          hi[1] = static_cast<char>(hi[1] & 0x7f);
          flipped = true;
        }
      }
    }
    at += ImageRecordBytes(std::string_view(one_sided).substr(at));
    REQUIRE(at <= one_sided.size());
  }
  refused(one_sided, "mutual", users, edges);
  // Lists before the ids, and lists out of order.
  const size_t ids_bytes = ImageRecordBytes(good);
  refused(good.substr(ids_bytes) + good.substr(0, ids_bytes), "user ids", users, edges);
}

// Rewrites the first packed record of `kind` through `edit`, which gets its header and decoded
// entries and may change both; the record is encoded again in their place.
std::string EditFirstPacked(
    const std::string& records, ImageTag kind,
    const std::function<void(PackedListHeader&, std::vector<EdgeEntry>&)>& edit) {
  for (size_t at = 0; at < records.size();) {
    const std::string_view rest = std::string_view(records).substr(at);
    const size_t n = ImageRecordBytes(rest);
    REQUIRE(n > 0);
    if (static_cast<uint8_t>(records[at]) == static_cast<uint8_t>(kind)) {
      PackedListHeader h;
      REQUIRE(ParsePackedListHeader(rest, &h));
      std::vector<EdgeEntry> entries(h.count);
      REQUIRE(DecodePackedList(h, rest.data() + h.header_bytes, entries.data()) == nullptr);
      edit(h, entries);
      std::string record;
      AppendPackedList(&record, h.tag, h.user, h.total, static_cast<uint32_t>(entries.size()),
                       [&](uint32_t i) { return entries[i]; });
      return records.substr(0, at) + record + records.substr(at + n);
    }
    at += n;
  }
  FAIL("no record of that kind");
  return records;
}

TEST_CASE("graph_image: a user with a million fans and one at the follow cap round-trip") {
  ManualClock clock;
  GraphOptions o = Options(&clock, 256);
  Graph g(o);
  std::vector<ImportEdge> edges;
  for (UserId fan = 10; fan < 10 + 1'000'000; ++fan)
    edges.push_back({fan, 1, 1'600'000'000'000 + static_cast<TimestampMs>(fan % 7'777) * 997});
  for (UserId b = 2; b < 2 + 1'000; ++b) edges.push_back({3, b, static_cast<TimestampMs>(b) << 30});
  edges.push_back({1, 10, kMaxTimestampMs});  // friends with its first fan, at the last ms
  REQUIRE(g.Import(edges).ok());
  REQUIRE(g.GetCounts(1)->fans == 1'000'000);
  const std::string packed = WholeImage(g);
  std::mt19937_64 rng(11);
  auto loaded = Load(o, packed, g.user_count(), g.edge_count(), rng);
  REQUIRE_MESSAGE(loaded.ok(), loaded.status().ToString());
  CHECK((*loaded)->Digest() == g.Digest());
  CHECK(*(*loaded)->GetCounts(1) == *g.GetCounts(1));
  PageRequest deep;
  deep.limit = 50;
  deep.offset = 654'321;
  CHECK((*loaded)->Fans(1, deep)->entries == g.Fans(1, deep)->entries);
  // A million one-entry following lists are mostly headers; the fans, a few bits each.
  CHECK(packed.size() < RawImage(g).size() * 2 / 3);
}

TEST_CASE("graph_image: damaged version-5 images are refused with what is wrong, never loaded") {
  DamageCase c(6);
  const std::string good = WholeImage(c.g);
  const uint64_t users = c.users;
  REQUIRE(Load(c.o, good, c.users, c.edges, c.rng).ok());
  auto refused = [&](const std::string& records, const std::string& what) {
    c.Refused(records, what, c.users, c.edges);
  };
  using Entries = std::vector<EdgeEntry>;
  refused(EditFirstPacked(
              good, ImageTag::kPackedFollowing,
              [&](PackedListHeader&, Entries& e) { e[0].peer = static_cast<InternalId>(users); }),
          "names internal id");
  refused(EditFirstPacked(good, ImageTag::kPackedFans,
                          [](PackedListHeader& h, Entries& e) { e.back().peer = h.user; }),
          "names internal id");
  refused(EditFirstPacked(good, ImageTag::kPackedFans,
                          [](PackedListHeader& h, Entries&) { h.user = 0xfffffff0; }),
          "list of internal id");
  refused(EditFirstPacked(good, ImageTag::kPackedFollowing,
                          [](PackedListHeader& h, Entries&) { ++h.total; }),
          "entries");
  refused(EditFirstPacked(good, ImageTag::kPackedFollowing,
                          [](PackedListHeader& h, Entries&) { h.tag = 9; }),
          "unknown kind");
  refused(EditFirstPacked(good, ImageTag::kPackedFollowing,
                          [](PackedListHeader& h, Entries& e) {
                            // Times cannot go back in a packed list (deltas are unsigned),
                            // but keys can: the same entry twice is not strictly increasing.
                            e.insert(e.begin() + 1, e[0]);
                            ++h.total;
                          }),
          "out of order");
  bool cleared = false;
  refused(EditFirstPacked(good, ImageTag::kPackedFans,
                          [&](PackedListHeader&, Entries& e) {
                            for (EdgeEntry& x : e) {
                              if (!cleared && EntryMutual(x)) {
                                SetEntryMutual(x, false);
                                cleared = true;
                              }
                            }
                            if (!cleared) {  // no mutual fan in the first record: add one
                              SetEntryMutual(e[0], true);
                              cleared = true;
                            }
                          }),
          "mutual");
  // A following list longer than a list holds (its size has 19 bits in the handle).
  refused(EditFirstPacked(good, ImageTag::kPackedFollowing,
                          [](PackedListHeader& h, Entries&) {
                            h.total = FollowingList::kMaxSize + 1;
                          }),
          "more than a list holds");
  // A part longer than a writer makes (65,536 entries), its list as long.
  refused(EditFirstPacked(good, ImageTag::kPackedFans,
                          [](PackedListHeader& h, Entries& e) {
                            e.resize(kImageEntriesPerRecord + 1, e.back());
                            h.total = kImageEntriesPerRecord + 1;
                          }),
          "more than 65536");
  // Cut a record short inside its payload.
  const size_t ids = ImageRecordBytes(good);
  const size_t first = ImageRecordBytes(std::string_view(good).substr(ids));
  refused(good.substr(0, ids + first - 1), "cut short");
}

TEST_CASE("graph_image: random damage to the records never crashes the loader") {
  // Checksums keep disk damage out; this is for a writer bug. The loader must refuse or load,
  // never read or write out of bounds (run under the sanitizers).
  ManualClock clock;
  const GraphOptions o = Options(&clock, 4);
  Graph g(o);
  std::mt19937_64 rng(9);
  Mutate(g, clock, rng, 2'000, 40);
  const std::string images[2] = {WholeImage(g), RawImage(g)};
  int refused = 0;
  for (int trial = 0; trial < 2'000; ++trial) {
    std::string bad = images[trial % 2];
    for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k)
      bad[rng() % bad.size()] ^= static_cast<char>(1 << (rng() % 8));
    GraphImageLoader loader(o);
    REQUIRE(loader.Begin(g.user_count(), g.edge_count()).ok());
    Status s = loader.AddBlock(bad);
    if (s.ok()) s = loader.Finish().status();
    refused += s.ok() ? 0 : 1;
  }
  CHECK(refused > 1'000);
}

}  // namespace
}  // namespace relgraph
