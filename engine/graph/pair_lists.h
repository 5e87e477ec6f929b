// PairLists: directed pairs of users (owner -> peer), each with a time, listed per owner newest
// first by (time, peer id). The graph keeps two: blocks (owner = the blocker) and pending
// follow requests (owner = the private account asked, peer = who asked).
//
// Why this design: these relations are rare next to follows, so they live beside the user
// records instead of in them (a user without any costs nothing). Each owner's list is a FanList
// (engine/graph/fan_list.h): pages at any depth or offset in O(log n + limit), and an insert or
// erase in O(log n + chunk), so a private celebrity with a million pending requests approves
// and rejects as cheaply as it gains a fan. A hash map of pairs answers "does a -> b exist,
// since when" in O(1), and a reverse index (peer -> owners) makes removing an account cost
// O(its pairs), not a scan of all of them.
//
// Thread-safety: none; the owning graph serializes mutations, const reads may run concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/graph/fan_list.h"
#include "storage/status.h"

namespace relgraph {

class PairLists {
 public:
  PairLists() = default;
  PairLists(const PairLists&) = delete;
  PairLists& operator=(const PairLists&) = delete;

  // The time of owner -> peer, or nullopt when there is no such pair.
  std::optional<TimestampMs> Find(InternalId owner, InternalId peer) const;
  bool Contains(InternalId owner, InternalId peer) const {
    return pairs_.contains(Key(owner, peer));
  }
  // REQUIRES: owner != peer, no pair owner -> peer.
  void Add(InternalId owner, InternalId peer, TimestampMs ts, const FanContext& ctx);
  // Removes owner -> peer; false when there was none.
  bool Remove(InternalId owner, InternalId peer, const FanContext& ctx);

  // owner's list (entries: peer, time; no kMutual bits), or nullptr when it has none.
  const FanList* ListOf(InternalId owner) const;
  uint32_t CountOwnedBy(InternalId owner) const;                // pairs owner -> *
  uint32_t CountNaming(InternalId peer) const;                  // pairs * -> peer
  std::vector<InternalId> PeersOf(InternalId owner) const;      // oldest first
  std::vector<InternalId> OwnersNaming(InternalId peer) const;  // in no particular order

  size_t size() const { return pairs_.size(); }
  // Calls fn(owner, peer, ts) for every pair, each owner's oldest first.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const auto& [owner, list] : lists_) {
      list.ForEach([&](const EdgeEntry& e) { fn(owner, InternalId{e.peer}, EntryTs(e)); });
    }
  }
  // Frees every list into `slab`; the owning graph calls it before it destroys the slab.
  void Clear(SlabAllocator& slab);
  // Heap bytes of the maps and chunk directories (list entries are slab memory).
  size_t MemoryBytes() const;
  // Checks the three structures against each other: kCorruption naming what differs.
  Status CheckConsistent(const EntryOrder& order, const char* what) const;

 private:
  static uint64_t Key(InternalId owner, InternalId peer) { return (uint64_t{owner} << 32) | peer; }

  std::unordered_map<uint64_t, TimestampMs> pairs_;
  std::unordered_map<InternalId, FanList> lists_;
  std::unordered_map<InternalId, std::unordered_set<InternalId>> owners_naming_;
};

}  // namespace relgraph
