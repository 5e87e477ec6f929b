// IdMap: interns external 64-bit user ids into dense 32-bit internal ids (0, 1, 2, ...).
//
// Why this design: every adjacency entry stores a 4-byte internal id instead of an 8-byte
// external one, which halves edge memory. The map is an open-addressing table (linear probing)
// whose 12-byte slots hold the external id and its internal id together, so a lookup costs one
// cache miss (user id 0 is invalid, so key 0 marks an empty slot). `external_` maps back,
// indexed by internal id. The table has any number of slots, not a power of two: a user's home
// slot is its hash scaled to the table (the high half of hash * slots), so a table built for a
// known count (Reserve, a snapshot's IndexAll) runs at a load of 0.8, and one that grows by
// interning grows 1.5x at a time (load 0.53-0.8). Cost per user: 8 bytes in `external_` plus
// 12 bytes per slot, 15-23 bytes. Both use huge pages. Ids are never un-interned (a user
// whose edges are all gone keeps its internal id).
//
// Thread-safety: const methods may run concurrently with each other; Intern() needs exclusion.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/mem/chunked_array.h"
#include "engine/mem/huge_pages.h"
#include "engine/mem/prefetch.h"
#include "engine/types.h"

namespace relgraph {

using InternalId = uint32_t;
inline constexpr InternalId kNoInternalId = UINT32_MAX;

class IdMap {
 public:
  IdMap();

  // The internal id of `user`, or kNoInternalId when it was never interned (always for 0).
  InternalId Find(UserId user) const {
    for (size_t i = Home(user);; i = Next(i)) {
      const Slot& s = slots_[i];
      if (s.key == 0) return kNoInternalId;  // empty slot: checked first, so 0 is never found
      if (s.key == user) return s.id;
    }
  }
  // Hints the CPU to fetch the slot Find(user) starts at. Forced inline, or GCC drops the
  // hint (engine/mem/prefetch.h).
  RELGRAPH_PREFETCH_HELPER void Prefetch(UserId user) const {
    __builtin_prefetch(&slots_[Home(user)]);
  }
  // The internal id of `user`, interning it if new. REQUIRES: user != 0, size() < 2^32 - 1.
  InternalId Intern(UserId user);

  UserId External(InternalId id) const { return external_[id]; }
  void PrefetchExternal(InternalId id) const { __builtin_prefetch(&external_[id]); }
  size_t size() const { return external_.size(); }

  void Reserve(size_t users);
  // Bulk loads, in two steps. AppendAll gives externals[i] the internal id i and returns the
  // index of the first id that is 0 (the map is then unusable), or externals.size(); after
  // it, External() answers for every id, but Find() and Intern() must wait for IndexAll.
  // REQUIRES: size() == 0.
  size_t AppendAll(std::span<const UserId> externals);
  // Builds the hash index of every id appended, in slot order (a bucket sort by home slot
  // first), so the table fills nearly sequentially instead of with one cache and TLB miss
  // per id. Returns the internal id of the first id that repeats an earlier one (the map is
  // then unusable), or size(). It writes only the index, so it may run on another thread
  // while others call External().
  size_t IndexAll();
  size_t MemoryBytes() const;

  // The table's hash of a user id (the splitmix64 finalizer): cheap, and it spreads any id
  // distribution, sequential ids included, evenly over all 64 bits. Others that bucket users
  // by hash use it too.
  static uint64_t Hash(UserId user) {
    uint64_t x = user + 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }

 private:
#pragma pack(push, 4)
  struct Slot {
    UserId key;  // 0 = empty
    InternalId id;
  };
#pragma pack(pop)
  static_assert(sizeof(Slot) == 12);

  // Where probing for `user` starts: its hash scaled to [0, slot_count_).
  size_t Home(UserId user) const {
    __extension__ using Wide = unsigned __int128;
    return static_cast<size_t>((static_cast<Wide>(Hash(user)) * slot_count_) >> 64);
  }
  size_t Next(size_t i) const {
    return i + 1 == slot_count_ ? 0 : i + 1;
  }
  // The slots that hold `users` at a load of at most 4/5.
  static size_t SlotsFor(size_t users) {
    return std::max<size_t>(16, users + users / 4 + 1);
  }
  void ClearSlots(size_t slot_count);  // an empty table of slot_count slots
  void Rehash(size_t slot_count);
  void Place(UserId user, InternalId id);

  ChunkedArray<UserId> external_;
  std::vector<Slot, HugePageAllocator<Slot>> slots_;
  size_t slot_count_ = 0;
};

}  // namespace relgraph
