// InboxBuffer against a std::set of keys, with many entries sharing a time (the case where its
// searches ask for ids), some ids unknown to id_of, and its capacity bound.
#include <doctest.h>

#include <iterator>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "engine/feed/inbox_buffer.h"

namespace relgraph {
namespace {

struct Post {
  PostId id;
  InboxEntry entry;
};

}  // namespace

TEST_CASE("inbox buffer: an entry keeps the ring entry's word and its author") {
  const PostEntry e = PostEntry::Make(42, kMaxTimestampMs, 63, 0xbeef);
  const InboxEntry x = InboxEntry::Of(0xfffffffe, e);
  CHECK(x.ring == 0xfffffffe);
  CHECK(x.packed() == e.packed);
  CHECK(x.ts() == kMaxTimestampMs);
  CHECK(x.kind() == 63);
  CHECK(x.seq() == 0xbeef);
  CHECK(x.SamePost(InboxEntry::Of(0xfffffffe, e)));
  CHECK(!x.SamePost(InboxEntry::Of(7, e)));
  CHECK(!x.SamePost(InboxEntry::Of(0xfffffffe, PostEntry::Make(42, kMaxTimestampMs, 63, 1))));
}

TEST_CASE("inbox buffer: random ops match a sorted set of keys") {
  std::mt19937_64 rng(11);
  for (uint32_t bound : {1u, 7u, 64u, 300u}) {
    BlockPool slab(sizeof(InboxEntry));
    InboxBuffer b;
    std::map<PostKey, InboxEntry> want;  // the model: key order
    // id_of's knowledge: most entries' ids are known, a few are not (0: older than any id).
    std::map<std::tuple<uint32_t, uint64_t>, PostId> known;
    uint32_t next_seq = 0;
    auto id_of = [&](const InboxEntry& x) {
      const auto it = known.find({x.ring, x.packed()});
      return it == known.end() ? PostId{0} : it->second;
    };
    for (int op = 0; op < 20000; ++op) {
      const uint32_t what = static_cast<uint32_t>(rng() % 10);
      if (what < 6) {
        // Few times, so ties are common; ids unique per key.
        const TimestampMs ts = static_cast<TimestampMs>(rng() % 40);
        const PostId id = rng() % 60 + 1;
        const uint32_t author = static_cast<uint32_t>(rng() % 5);
        const PostKey key{ts, id};
        const auto present = want.find(key);
        const InboxEntry x = present != want.end()
                                 ? present->second
                                 : InboxEntry::Of(author, PostEntry::Make(id, ts, 1, next_seq++));
        if (present == want.end()) known[{x.ring, x.packed()}] = id;
        CHECK(b.Insert(x, id, bound, slab, id_of) == (present == want.end()));
        want.emplace(key, x);
      } else if (what < 8 && !want.empty()) {
        auto it = std::next(want.begin(), static_cast<long>(rng() % want.size()));
        const uint32_t at = b.Find(it->second);
        REQUIRE(at < b.size());
        CHECK(b[at].SamePost(it->second));
        b.EraseAt(at);
        want.erase(it);
      } else if (!want.empty()) {
        CHECK(b.oldest().SamePost(want.begin()->second));
        b.PopOldest();
        want.erase(want.begin());
      }
      while (b.size() > bound) {  // the owner's trim
        b.PopOldest();
        want.erase(want.begin());
      }
      REQUIRE(b.size() == want.size());
      CHECK(b.MemoryBytes() <= (size_t{bound} + bound / 16 + 5) * sizeof(InboxEntry));
    }
    uint32_t i = 0;
    for (const auto& [key, x] : want) {
      REQUIRE(b[i].SamePost(x));
      CHECK(b.LowerBound(key, id_of) == i);
      CHECK(b.LowerBound(PostKey{key.ts, key.post + 1}, id_of) == i + 1);
      ++i;
    }
    b.Clear(slab);
    CHECK(b.empty());
    CHECK(slab.LiveBytes() == 0);
  }
}

TEST_CASE("inbox buffer: an entry whose id is unknown keeps the known ones in order") {
  BlockPool slab(sizeof(InboxEntry));
  InboxBuffer b;
  std::map<uint64_t, PostId> ids;  // packed word -> id; seq 0 is left unknown
  auto id_of = [&](const InboxEntry& x) {
    const auto it = ids.find(x.packed());
    return it == ids.end() ? PostId{0} : it->second;
  };
  const InboxEntry unknown = InboxEntry::Of(1, PostEntry::Make(50, 10, 0, 0));
  REQUIRE(b.Insert(unknown, 50, 16, slab, id_of));
  for (uint16_t seq = 1; seq <= 6; ++seq) {
    const PostId id = (seq * 37) % 11 + 1;  // 1..11, out of order
    const InboxEntry x = InboxEntry::Of(2, PostEntry::Make(id, 10, 0, seq));
    ids[x.packed()] = id;
    REQUIRE(b.Insert(x, id, 16, slab, id_of));
  }
  PostId previous = 0;
  for (uint32_t i = 0; i < b.size(); ++i) {
    const PostId id = id_of(b[i]);
    if (id == 0) continue;
    CHECK(previous < id);
    previous = id;
  }
  CHECK(b.Find(unknown) < b.size());
  b.Clear(slab);
}

}  // namespace relgraph
