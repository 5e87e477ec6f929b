// PairLists: directed pairs of users (owner -> peer), each with a time, listed per owner newest
// first by (time, peer id). The graph keeps two: blocks (owner = the blocker) and pending
// follow requests (owner = the private account asked, peer = who asked).
//
// Why this design: these relations are rare next to follows, so they live beside the user
// records instead of in them (a user without any costs nothing). Each owner's list is a FanList
// (engine/graph/fan_list.h): pages at any depth or offset in O(log n + limit), and an insert or
// erase in O(log n + chunk), so a private celebrity with a million pending requests approves
// and rejects as cheaply as it gains a fan. A flat hash map of pairs (engine/mem/
// flat_hash_map.h) answers "does a -> b exist, since when" with one probe, and a reverse index
// (peer -> owners) makes removing an account cost O(its pairs), not a scan of all of them.
// The reverse index keeps a peer named once inline and spills longer sets into vectors; each
// pair remembers its place in that vector, so removing one pair is O(1) even for a user whom a
// million others block. About 90 B per pair in all (bench: go_public).
//
// Thread-safety: none; the owning graph serializes mutations, const reads may run concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "engine/graph/fan_list.h"
#include "engine/mem/flat_hash_map.h"
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
    return pairs_.Contains(Key(owner, peer));
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

  struct PairInfo {
    TimestampMs ts;
    uint32_t place;  // owner's index in spill_[peer's set] (0 while the peer is named once)
  };
  // The owners naming one peer: `count` of them; one inline, or a vector in spill_.
  struct NamedBy {
    uint32_t count;
    uint32_t owner_or_spill;  // count == 1: the owner; count > 1: an index into spill_
  };
  void DropFromReverse(InternalId owner, InternalId peer, uint32_t place);
  // Whether the reverse index names owner for peer, at the place the pair records.
  bool NamedIn(InternalId owner, InternalId peer) const;

  FlatHashMap<PairInfo> pairs_;  // Key(owner, peer)
  std::unordered_map<InternalId, FanList> lists_;
  FlatHashMap<NamedBy> named_by_;               // key: peer
  std::vector<std::vector<InternalId>> spill_;  // owner sets of peers named more than once
  std::vector<uint32_t> free_spill_;            // unused indexes of spill_
};

}  // namespace relgraph
