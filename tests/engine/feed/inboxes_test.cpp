// Inboxes against a model (per reader: none, a mark, or a sorted set of keys under a
// watermark, with pending authors and a celebrity list): random inserts, erases, trims,
// builds, marks, pending authors, drops, budget sweeps and block moves, with every inbox
// compared and the invariants (counts and bytes against a recount) checked along the way.
#include "engine/feed/inboxes.h"

#include <doctest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <vector>

namespace relgraph {
namespace {

using Key = std::pair<TimestampMs, PostId>;

constexpr uint32_t kR = 12;        // timeline length
constexpr InternalId kUsers = 64;  // readers and authors
constexpr uint32_t kPostsPerAuthor = 40;

struct ModelInbox {
  bool mark = false;
  std::set<Key> entries;
  // The watermark: (ts, id) with id ~0 for the top of a millisecond; none when nullopt.
  std::optional<Key> watermark;
  std::set<InternalId> pending;
  std::vector<InternalId> celebrities;

  bool Below(const Key& k) const { return watermark && k <= *watermark; }
};

// The posts: every author's ring filled once, never changed, so every entry resolves.
struct Rings {
  Graph g;
  PostStore store{kPostsPerAuthor};
  std::vector<std::vector<PostEntry>> posts;  // by author, oldest first

  Rings() {
    for (UserId u = 1; u <= kUsers; ++u) g.InternUser(u);
    std::mt19937_64 rng(5);
    PostId next = 1;
    posts.resize(kUsers);
    for (InternalId a = 0; a < kUsers; ++a) {
      std::set<Key> mine;
      for (uint32_t i = 0; i < kPostsPerAuthor; ++i) mine.insert({1'000 + rng() % 60, next++});
      for (const Key& k : mine) {
        auto added = store.Add(a, k.second, k.first, 0, kUsers, a + 1);
        REQUIRE(added.ok());
        REQUIRE(added->retained);
        posts[a].push_back(added->entry);
      }
    }
  }
};

class Checker {
 public:
  Checker(Rings& rings, Inboxes& inboxes) : rings_(rings), inboxes_(inboxes) {}

  void Compare(const std::map<InternalId, ModelInbox>& model) const {
    for (InternalId u = 0; u < kUsers; ++u) {
      const uint32_t word = inboxes_.SlotOf(u);
      const auto it = model.find(u);
      if (it == model.end()) {
        REQUIRE(word == Inboxes::kNoSlot);
        continue;
      }
      const ModelInbox& m = it->second;
      REQUIRE(Inboxes::IsMark(word) == m.mark);
      if (m.mark) continue;
      REQUIRE(Inboxes::IsPoolSlot(word));
      const Inboxes::Inbox& in = inboxes_.HeaderAt(word);
      std::vector<Key> got;
      for (uint32_t i = 0; i < in.entries().size(); ++i) {
        const InboxEntry& x = in.entries()[i];
        got.push_back({x.ts(), rings_.store.IdOfEntry(x)});
      }
      REQUIRE(got == std::vector<Key>(m.entries.begin(), m.entries.end()));
      REQUIRE(in.has_watermark() == m.watermark.has_value());
      if (m.watermark) {
        REQUIRE(in.watermark_ts() == m.watermark->first);
        REQUIRE(in.watermark_at_top() == (m.watermark->second == ~PostId{0}));
      }
      const Inboxes::Cold& c = inboxes_.ColdAt(word);
      REQUIRE(inboxes_.HasPending(c) == !m.pending.empty());
      if (c.celebrities_epoch != 0) {
        const auto listed = inboxes_.CelebritiesOf(c);
        REQUIRE(std::vector<InternalId>(listed.begin(), listed.end()) == m.celebrities);
      }
    }
    const auto name = [](InternalId u) { return std::to_string(u); };
    const auto ok_header = [](const Inboxes::Cold&, const std::string&) { return Status::OK(); };
    const auto ok_mark = [](InternalId) { return Status::OK(); };
    const Status s = inboxes_.CheckInvariants(name, kUsers, ok_header, ok_mark);
    INFO(s.ToString());
    REQUIRE(s.ok());
  }

 private:
  Rings& rings_;
  Inboxes& inboxes_;
};

TEST_CASE("inboxes: random operations agree with a model, counts and bytes with a recount") {
  Rings rings;
  Inboxes inboxes(rings.store, kR, /*memory_budget=*/size_t{1} << 30, /*active_reader_ms=*/1'000,
                  /*now=*/0);
  Checker checker(rings, inboxes);
  std::map<InternalId, ModelInbox> model;
  std::mt19937_64 rng(17);
  uint64_t inserts = 0;
  uint32_t epoch = 1;
  for (int step = 0; step < 40'000; ++step) {
    const auto reader = static_cast<InternalId>(rng() % kUsers);
    const auto author = static_cast<InternalId>(rng() % kUsers);
    const uint32_t ring = rings.store.RingSlot(author);
    const PostEntry& e = rings.posts[author][rng() % kPostsPerAuthor];
    const Key key{e.ts(), e.id};
    const auto it = model.find(reader);
    const int dice = static_cast<int>(rng() % 100);
    if (it == model.end()) {
      if (dice < 50) continue;
      // A build: the newest posts of a few authors, the one after R left out as watermark.
      std::set<Key> all;
      std::map<Key, std::pair<uint32_t, PostEntry>> by_key;
      for (int k = 0; k < 3; ++k) {
        const auto a = static_cast<InternalId>(rng() % kUsers);
        for (const PostEntry& p : rings.posts[a]) {
          all.insert({p.ts(), p.id});
          by_key[{p.ts(), p.id}] = {rings.store.RingSlot(a), p};
        }
      }
      ModelInbox m;
      std::vector<InboxEntry> newest_first;
      std::optional<PostEntry> left_out;
      for (auto k = all.rbegin(); k != all.rend(); ++k) {
        if (newest_first.size() == kR) {
          left_out = by_key[*k].second;
          m.watermark = *k;
          break;
        }
        newest_first.push_back(InboxEntry::Of(by_key[*k].first, by_key[*k].second));
        m.entries.insert(*k);
      }
      if (rng() % 4 == 0) {  // sometimes an empty build
        newest_first.clear();
        left_out.reset();
        m = ModelInbox{};
      }
      Inboxes::Inbox& in = inboxes.New(reader, kUsers);
      inboxes.Fill(reader, in, newest_first, left_out ? &*left_out : nullptr);
      std::vector<InternalId> celebrities;
      for (int k = static_cast<int>(rng() % 4); k > 0; --k)
        celebrities.push_back(static_cast<InternalId>(rng() % kUsers));
      inboxes.SetCelebrities(inboxes.ColdOf(reader), celebrities, epoch);
      m.celebrities = celebrities;
      model[reader] = m;
    } else if (ModelInbox& m = it->second; m.mark) {
      if (dice < 40) {
        inboxes.MaterializeMark(reader, epoch);
        m = ModelInbox{};
      } else if (dice < 60) {
        inboxes.AddPending(reader, author);
        m = ModelInbox{};
        m.pending.insert(author);
      } else if (dice < 70) {
        REQUIRE(inboxes.TouchMark(reader, static_cast<uint32_t>(step)));
      } else {
        REQUIRE(inboxes.Free(reader));
        model.erase(it);
      }
    } else {
      Inboxes::Inbox& in = *inboxes.Find(reader);
      if (dice < 45) {
        inboxes.Insert(in, reader, ring, e);
        if (!m.Below(key) && m.entries.insert(key).second) {
          ++inserts;
          if (m.entries.size() > kR) {
            const TimestampMs oldest = m.entries.begin()->first;
            std::erase_if(m.entries, [&](const Key& k) { return k.first == oldest; });
            if (!m.watermark || *m.watermark < Key{oldest, ~PostId{0}})
              m.watermark = Key{oldest, ~PostId{0}};
          }
        }
      } else if (dice < 60) {
        inboxes.Erase(in, reader, ring, e);
        if (!m.Below(key)) m.entries.erase(key);
      } else if (dice < 65) {
        inboxes.EraseRing(in, ring);
        std::erase_if(m.entries, [&](const Key& k) {
          return std::ranges::any_of(rings.posts[author],
                                     [&](const PostEntry& p) { return p.id == k.second; });
        });
      } else if (dice < 72) {
        // A probe of Below at a random key.
        REQUIRE(inboxes.Below(in, reader, {key.first, key.second}) == m.Below(key));
      } else if (dice < 80) {
        inboxes.AddPending(reader, author);
        if (m.pending.size() < 64 || m.pending.contains(author)) {
          m.pending.insert(author);
        } else {
          model.erase(it);  // too many pending: dropped
        }
      } else if (dice < 86) {
        // A read: take what is pending, list the celebrities again, maybe become a mark.
        std::vector<InternalId> taken = inboxes.TakePending(inboxes.ColdOf(reader));
        std::sort(taken.begin(), taken.end());
        REQUIRE(taken == std::vector<InternalId>(m.pending.begin(), m.pending.end()));
        m.pending.clear();
        std::vector<InternalId> celebrities;
        if (rng() % 2 == 0) celebrities.push_back(author);
        inboxes.SetCelebrities(inboxes.ColdOf(reader), celebrities, epoch);
        m.celebrities = celebrities;
        inboxes.Touch(reader, static_cast<uint32_t>(step));
        const bool empty = m.entries.empty() && !m.watermark && celebrities.empty();
        REQUIRE(inboxes.MarkIfEmpty(reader, static_cast<uint32_t>(step)) == empty);
        if (empty) m = ModelInbox{.mark = true};
      } else if (dice < 90) {
        ++epoch;
        inboxes.StaleAllCelebrityLists();
      } else if (dice < 95) {
        inboxes.Drop(reader);
        model.erase(it);
      } else {
        REQUIRE(inboxes.Free(reader));
        model.erase(it);
      }
    }
    if (step % 997 == 0) {
      inboxes.BeginMove();
      while (inboxes.moving()) inboxes.MoveSome(7);
    }
    if (step % 101 == 0) checker.Compare(model);
  }
  checker.Compare(model);
  REQUIRE(inboxes.inserts() == inserts);
  size_t marks = 0;
  for (const auto& [u, m] : model) marks += m.mark;
  REQUIRE(inboxes.count() == model.size());
  REQUIRE(inboxes.marks() == marks);
}

TEST_CASE("inboxes: the budget drops unread inboxes first, never the one kept, down to 90%") {
  Rings rings;
  constexpr size_t kBudget = 4'000, kTarget = kBudget / 10 * 9;
  Inboxes inboxes(rings.store, kR, kBudget, 1'000, 0);
  auto fill = [&](InternalId u) {
    Inboxes::Inbox& in = inboxes.New(u, kUsers);
    const InternalId a = (u + 1) % kUsers;
    for (const PostEntry& p : rings.posts[a]) inboxes.Insert(in, u, rings.store.RingSlot(a), p);
  };
  for (InternalId u = 0; u < kUsers; ++u) fill(u);
  REQUIRE(inboxes.live_bytes() > kBudget);
  // Every inbox is new, so referenced: the first pass clears them all, the second drops from
  // the hand on until the target, never inbox 0.
  inboxes.EnforceBudget(/*keep=*/0);
  REQUIRE(inboxes.live_bytes() <= kTarget);
  REQUIRE(inboxes.Find(0) != nullptr);
  std::vector<InternalId> survivors, touched, untouched;
  for (InternalId u = 1; u < kUsers; ++u)
    if (inboxes.Find(u) != nullptr) survivors.push_back(u);
  REQUIRE(survivors.size() >= 4);
  // Read every other survivor, then push the total just past the budget with new inboxes.
  for (size_t i = 0; i < survivors.size(); ++i) {
    (i % 2 == 0 ? touched : untouched).push_back(survivors[i]);
    if (i % 2 == 0) inboxes.Touch(survivors[i], 1);
  }
  std::vector<InternalId> fresh;
  for (InternalId u = 1; u < kUsers && inboxes.live_bytes() <= kBudget; ++u) {
    if (inboxes.Find(u) != nullptr) continue;
    fill(u);
    fresh.push_back(u);
  }
  REQUIRE(inboxes.live_bytes() > kBudget);
  // What must go is less than the unread survivors hold: the hand, which goes on from where
  // it stopped, reaches the target among them, on its first pass.
  const size_t unread_bytes = untouched.size() * (inboxes.live_bytes() / inboxes.count());
  REQUIRE(inboxes.live_bytes() - kTarget < unread_bytes / 2);
  const uint64_t drops = inboxes.drops();
  inboxes.EnforceBudget(/*keep=*/0);
  REQUIRE(inboxes.live_bytes() <= kTarget);
  REQUIRE(inboxes.drops() > drops);
  for (InternalId u : touched) REQUIRE(inboxes.Find(u) != nullptr);
  for (InternalId u : fresh) REQUIRE(inboxes.Find(u) != nullptr);
  REQUIRE(inboxes.Find(0) != nullptr);
  const auto name = [](InternalId u) { return std::to_string(u); };
  const Status s = inboxes.CheckInvariants(
      name, kUsers, [](const Inboxes::Cold&, const std::string&) { return Status::OK(); },
      [](InternalId) { return Status::OK(); });
  REQUIRE(s.ok());
}

TEST_CASE("inboxes: an inbox is inactive after active_reader_ms, to within 1/1024 of it") {
  Rings rings;
  for (const TimestampMs d : {TimestampMs{1}, TimestampMs{1'000}, TimestampMs{86'400'000}}) {
    const TimestampMs base = 5'000;
    Inboxes inboxes(rings.store, kR, size_t{1} << 30, d, base);
    REQUIRE(inboxes.ActivityTick(base - 1) == 0);  // a clock before the start
    const uint32_t read = inboxes.ActivityTick(base + 3 * d);
    const TimestampMs slack = std::max<TimestampMs>(1, d / 1024) * 2;
    REQUIRE_FALSE(inboxes.Inactive(read, inboxes.ActivityTick(base + 4 * d - slack)));
    REQUIRE(inboxes.Inactive(read, inboxes.ActivityTick(base + 4 * d + slack)));
  }
}

}  // namespace
}  // namespace relgraph
