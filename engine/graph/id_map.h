// IdMap: interns external 64-bit user ids into dense 32-bit internal ids (0, 1, 2, ...), and
// owns the user records (engine/graph/user_record.h) those ids index.
//
// Why this design: every adjacency entry stores a 4-byte internal id instead of an 8-byte
// external one, which halves edge memory. The records map back (each holds its external id),
// and the hash index is an open-addressing table (linear probing) of 5-byte slots: the
// internal id and an 8-bit fingerprint of the key's hash. The key is not in the slot: a probe
// whose fingerprint matches confirms it in the record, which is the read every caller makes
// next anyway, so a lookup still costs the slot's cache miss and the record's; only 1 in 256
// probes that pass another key reads a record in vain. A slot with the key in it took 12 bytes.
//
// The table has any number of slots, not a power of two: a user's home slot is its hash
// scaled to the table (the high half of hash * slots); the fingerprint is the hash's low byte,
// independent of the home. A table built for a known count (Reserve, a snapshot's IndexAll)
// runs at a load of 0.8, and one that grows by interning grows 1.5x at a time (load
// 0.53-0.8): 6.3-9.4 bytes of table per user, besides its 28-byte record. Both use huge
// pages. Growing moves the users in steps rather than all at once: a map of 155M users took
// ~9 s to rebuild, under the writers' lock, at the first new user after a restart. Each
// Intern moves kGrowthStep users (or set_growth_step's: GraphOptions::id_growth_step), which
// bounds the growth by new users alone; a Db's background worker also calls Grow between
// writes (engine/db.h), so the old table, 2/3 of the new one's size, goes within seconds, not
// only once the new users have moved it (~150k of them at 155M users and kGrowthStep).
// Meanwhile the old table answers for the users not moved yet: a lookup that misses the new
// table probes the old one. An empty slot has id kNoInternalId, so there are at most
// 2^32 - 1 users. Ids are
// never un-interned (a user whose edges are all gone keeps its internal id and record).
//
// Thread-safety: const methods may run concurrently with each other; Intern() needs exclusion.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "engine/graph/internal_id.h"
#include "engine/graph/user_record.h"
#include "engine/mem/chunked_array.h"
#include "engine/mem/huge_pages.h"
#include "engine/mem/prefetch.h"
#include "engine/types.h"

namespace relgraph {

class IdMap {
 public:
  IdMap();

  // The internal id of `user`, or kNoInternalId when it was never interned (always for 0).
  InternalId Find(UserId user) const {
    const uint64_t h = Hash(user);
    for (Match m = NextMatch(Home(h), Fingerprint(h));; m = NextMatch(Next(m.slot), m.fp)) {
      if (m.id == kNoInternalId) [[likely]]
        return growing() ? FindInOldTable(user, h) : m.id;
      if (records_[m.id].external == user) return m.id;
    }
  }
  // Hints the CPU to fetch the slot Find(user) starts at. Forced inline, or GCC drops the
  // hint (engine/mem/prefetch.h).
  RELGRAPH_PREFETCH_HELPER void Prefetch(UserId user) const {
    __builtin_prefetch(SlotAddress(Home(Hash(user))));
  }
  // After Prefetch(user) had time to land: the id Find(user) most likely answers (that of
  // the first slot whose fingerprint matches; kNoInternalId when none does, and then `user`
  // is not in the map, unless it is growing), its record on its way into the cache.
  // Pipelines over many users (relations batches, bulk writes) take this guess a few steps
  // ahead and Confirm it when the record has come.
  RELGRAPH_PREFETCH_HELPER InternalId PrefetchCandidate(UserId user) const {
    const uint64_t h = Hash(user);
    const InternalId id = NextMatch(Home(h), Fingerprint(h)).id;
    if (id != kNoInternalId) __builtin_prefetch(&records_[id]);
    return id;
  }
  // Find(user), given PrefetchCandidate(user)'s guess taken since the map last changed (or
  // earlier: then a kNoInternalId may be stale, and `user` interned since). Reads the
  // guess's record; probes again only when the guess was another user.
  InternalId Confirm(InternalId guess, UserId user) const {
    if (guess == kNoInternalId ? !growing() : records_[guess].external == user) [[likely]]
      return guess;
    return Find(user);
  }
  // The internal id of `user`, interning it if new (with an empty record). REQUIRES:
  // user != 0, size() < 2^32 - 1.
  InternalId Intern(UserId user);

  UserId External(InternalId id) const { return records_[id].external; }
  void PrefetchRecord(InternalId id) const { __builtin_prefetch(&records_[id]); }
  size_t size() const { return records_.size(); }
  // The records, one per internal id. Their `external` fields are the map's: only it sets them.
  ChunkedArray<UserRecord>& records() { return records_; }
  const ChunkedArray<UserRecord>& records() const { return records_; }

  void Reserve(size_t users);
  // Bulk loads, in two steps. AppendAll gives externals[i] the internal id i (and an empty
  // record) and returns the index of the first id that is 0 (the map is then unusable), or
  // externals.size(); after it, External() answers for every id, but Find() and Intern()
  // must wait for IndexAll.
  // REQUIRES: size() == 0.
  size_t AppendAll(std::span<const UserId> externals);
  // Builds the hash index of every id appended, in slot order (a bucket sort by home slot
  // first), so the table fills nearly sequentially instead of with one cache and TLB miss
  // per id. Returns the internal id of the first id that repeats an earlier one (the map is
  // then unusable), or size(). It writes only the index and reads only the records'
  // external ids, so it may run on another thread while others call External() or fill the
  // records' other fields.
  size_t IndexAll();
  size_t MemoryBytes() const;  // the table (both while growing); the records are RecordBytes()
  // Whether users are being moved into a larger table.
  bool growing() const { return old_slot_count_ != 0; }
  // While growing, moves up to `users` more users into the larger table (the last move frees
  // the old one). Returns growing(). Needs exclusion, as Intern does.
  bool Grow(size_t users);
  // Users moved per Intern while growing, by default: ~21 us of prefetched random stores on a
  // map of 40M users (relgraph-bench's id_growth row, AMD EPYC; 42 us without the prefetch).
  static constexpr size_t kGrowthStep = 1024;
  // The users each Intern moves while growing (GraphOptions::id_growth_step): fewer when
  // something else calls Grow too. REQUIRES: n >= 2: a growth of N users then ends with at
  // most ceil(N / n) new ones (the first included), ~1.2x the old table's slots in the new
  // one's 1.5x, so probing always meets an empty slot; at n = 1 the table would fill.
  void set_growth_step(size_t n) {
    assert(n >= 2);
    growth_step_ = n;
  }
  size_t RecordBytes() const { return records_.MemoryBytes(); }

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
  static constexpr size_t kSlotBytes = 5;  // internal id (u32, little-endian), fingerprint (u8)
  // Bytes past the last slot, so LoadSlot may read 8 bytes at any slot.
  static constexpr size_t kSlotPadding = 8 - kSlotBytes;

  static uint8_t Fingerprint(uint64_t hash) { return static_cast<uint8_t>(hash); }
  // The first slot from `slot` on that is empty (id kNoInternalId) or has fingerprint fp.
  struct Match {
    InternalId id;
    size_t slot;
    uint8_t fp;
  };
  Match NextMatch(size_t slot, uint8_t fp) const {
    for (;; slot = Next(slot)) {
      const uint64_t s = LoadSlot(slot);
      const auto id = static_cast<InternalId>(s);
      if (id == kNoInternalId || static_cast<uint8_t>(s >> 32) == fp) return {id, slot, fp};
    }
  }
  // Where probing for a hash starts: the hash scaled to [0, slot_count). HomeIn and
  // LoadSlotIn serve any table (the old one while growing); Home and LoadSlot this one.
  static size_t HomeIn(uint64_t hash, size_t slot_count) {
    __extension__ using Wide = unsigned __int128;
    return static_cast<size_t>((static_cast<Wide>(hash) * slot_count) >> 64);
  }
  size_t Home(uint64_t hash) const { return HomeIn(hash, slot_count_); }
  size_t Next(size_t i) const { return i + 1 == slot_count_ ? 0 : i + 1; }
  const char* SlotAddress(size_t i) const { return slots_.data() + kSlotBytes * i; }
  // Slot i in the low 40 bits (the 3 bytes above belong to the next slot).
  static uint64_t LoadSlotIn(const char* slots, size_t i) {
    uint64_t v;
    std::memcpy(&v, slots + kSlotBytes * i, sizeof(v));
    return v;
  }
  uint64_t LoadSlot(size_t i) const { return LoadSlotIn(slots_.data(), i); }
  void StoreSlot(size_t i, InternalId id, uint8_t fp) {
    char* at = slots_.data() + kSlotBytes * i;
    std::memcpy(at, &id, sizeof(id));
    at[4] = static_cast<char>(fp);
  }
  // The slots that hold `users` at a load of at most 4/5.
  static size_t SlotsFor(size_t users) { return std::max<size_t>(16, users + users / 4 + 1); }
  void ClearSlots(size_t slot_count);  // an empty table of slot_count slots
  void Rehash(size_t slot_count);      // every user at once (ends a growth)
  void Place(UserId user, InternalId id);
  void PlaceIds(size_t begin, size_t end);  // Place for the ids [begin, end), prefetching
  // Hints the CPU to fetch, for writing, the home slot of user `id` in this table.
  RELGRAPH_PREFETCH_HELPER void PrefetchHome(size_t id) const {
    __builtin_prefetch(SlotAddress(Home(Hash(records_[id].external))), 1);
  }
  // Growing: BeginGrowth keeps the table as the old one and starts an empty larger one;
  // each Grow moves the next users into it; the last frees the old table.
  void BeginGrowth(size_t slot_count);
  void EndGrowth();
  InternalId FindInOldTable(UserId user, uint64_t hash) const;

  ChunkedArray<UserRecord> records_;
  std::vector<char, HugePageAllocator<char>> slots_;  // slot_count_ slots, then kSlotPadding
  size_t slot_count_ = 0;
  // While growing: the table before it (ids [moved_, moving_end_) are only there).
  std::vector<char, HugePageAllocator<char>> old_slots_;
  size_t old_slot_count_ = 0;
  size_t moved_ = 0, moving_end_ = 0;
  size_t growth_step_ = kGrowthStep;
};

}  // namespace relgraph
