// IdMap: interns external 64-bit user ids into dense 32-bit internal ids (0, 1, 2, ...).
//
// Why this design: every adjacency entry stores a 4-byte internal id instead of an 8-byte
// external one, which halves edge memory. The map is an open-addressing table (linear probing)
// of 4-byte internal ids plus a 1-byte hash tag per slot; the external id itself lives once, in
// `external_`, indexed by internal id. A lookup compares tags first and touches `external_`
// only on a tag match. Cost: 8 bytes per user for `external_` plus 5 bytes per slot at a load
// factor of at most 0.8. Ids are never un-interned (a user whose edges are all gone keeps its
// internal id; it costs 13-20 bytes).
//
// Thread-safety: const methods may run concurrently with each other; Intern() needs exclusion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/types.h"

namespace relgraph {

using InternalId = uint32_t;
inline constexpr InternalId kNoInternalId = UINT32_MAX;

class IdMap {
 public:
  IdMap();

  // The internal id of `user`, or kNoInternalId when it was never interned.
  InternalId Find(UserId user) const;
  // The internal id of `user`, interning it if new. REQUIRES: user != 0, size() < 2^32 - 1.
  InternalId Intern(UserId user);

  UserId External(InternalId id) const { return external_[id]; }
  const UserId* external_data() const { return external_.data(); }
  size_t size() const { return external_.size(); }

  void Reserve(size_t users);
  size_t MemoryBytes() const;

 private:
  static uint64_t Hash(UserId user);
  void Rehash(size_t slot_count);
  void Place(InternalId id, uint64_t hash);

  std::vector<UserId> external_;
  std::vector<InternalId> slot_ids_;
  std::vector<uint8_t> slot_tags_;  // 0 = empty slot
  size_t mask_ = 0;
};

}  // namespace relgraph
