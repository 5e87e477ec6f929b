// IdMap: interns external 64-bit user ids into dense 32-bit internal ids (0, 1, 2, ...).
//
// Why this design: every adjacency entry stores a 4-byte internal id instead of an 8-byte
// external one, which halves edge memory. The map is an open-addressing table (linear probing)
// whose 12-byte slots hold the external id and its internal id together, so a lookup costs one
// cache miss (user id 0 is invalid, so key 0 marks an empty slot). `external_` maps back,
// indexed by internal id. Cost per user: 8 bytes in `external_` plus 12 bytes per slot at a
// load factor between 0.4 and 0.8. Both use huge pages. Ids are never un-interned (a user
// whose edges are all gone keeps its internal id).
//
// Thread-safety: const methods may run concurrently with each other; Intern() needs exclusion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/mem/chunked_array.h"
#include "engine/mem/huge_pages.h"
#include "engine/types.h"

namespace relgraph {

using InternalId = uint32_t;
inline constexpr InternalId kNoInternalId = UINT32_MAX;

class IdMap {
 public:
  IdMap();

  // The internal id of `user`, or kNoInternalId when it was never interned (always for 0).
  InternalId Find(UserId user) const {
    for (size_t i = Hash(user) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == 0) return kNoInternalId;  // empty slot: checked first, so 0 is never found
      if (s.key == user) return s.id;
    }
  }
  // Hints the CPU to fetch the slot Find(user) starts at.
  void Prefetch(UserId user) const { __builtin_prefetch(&slots_[Hash(user) & mask_]); }
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

  // A table of at least `slots` slots, doubled until `users` fill at most 4/5 of it.
  static size_t GrownSlots(size_t users, size_t slots) {
    while (users * 5 > slots * 4) slots *= 2;
    return slots;
  }
  void ClearSlots(size_t slot_count);  // an empty table of slot_count slots
  void Rehash(size_t slot_count);
  void Place(UserId user, InternalId id);

  ChunkedArray<UserId> external_;
  std::vector<Slot, HugePageAllocator<Slot>> slots_;
  size_t mask_ = 0;
};

}  // namespace relgraph
