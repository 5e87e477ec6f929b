// Inboxes: every reader's materialized inbox, what keeps it cheap, its counts, and the memory
// budget that evicts it. Feed decides what goes in an inbox (fan-out, builds by pull,
// reconcile); this class keeps the inboxes themselves exact and counted.
//
// Why this design:
// - Slots and marks. A reader's word in the slot array is kNoSlot (no inbox), a pool slot
//   (below kMarkBit), or a mark: kMarkBit plus the activity tick of its last read, for an
//   inbox that holds nothing (no entries, no watermark, no side) of a reader who follows no
//   celebrity it may see. Such an inbox has no header: about a third of the bench's inboxes
//   are empty, and a header costs 44 bytes. The first post pushed to it, or any change of the
//   reader's view, gives it one back. A mark keeps no celebrity epoch: Feed drops marks when
//   a followee's promotion or a recompute could make "no celebrity followee" false.
// - Two parallel pools, one slot naming both: Inbox, 32 bytes, is what the fan-out touches
//   for every insert (entries, the watermark's time, the last read), so the fan-out reaches an
//   inbox's newest entry in two dependent loads after the reader's slot, and two headers
//   share a cache line, none crossing one; Cold, 12 bytes, is what only reads, the budget and
//   checks use (docs/feed.md, "Memory per inbox entry and per post").
// - The id of a watermark that a build set, which a comparison needs only at the watermark's
//   own millisecond, is kept apart in a map: a build sets it only when more than R posts
//   qualify.
// - Sides (two id lists in one pooled block) hold what few inboxes need: two or more visible
//   celebrity followees, and the authors pending reconcile.
// - The budget evicts by CLOCK (second chance) over the cold pool, not by an LRU list: a read
//   only sets `referenced` in a line it has loaded anyway.
// - Every operation keeps the byte count exact (the budget evicts by it), and CheckInvariants
//   recounts it.
//
// Thread-safety: not thread-safe; Feed serializes every call.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/feed/feed_types.h"
#include "engine/feed/id_list_pair.h"
#include "engine/feed/inbox_buffer.h"
#include "engine/feed/post_store.h"
#include "engine/mem/chunked_array.h"
#include "engine/mem/compacting_pool.h"
#include "engine/mem/prefetch.h"
#include "storage/status.h"

namespace relgraph {

class Inboxes {
 public:
  static constexpr uint32_t kNoSlot = PostStore::kNoSlot;

  // One reader's inbox header. It derives from its entry buffer, not holds it, so that
  // last_read fills the buffer's tail padding; privately, so that only Inboxes changes entries.
  struct Inbox : private InboxBuffer {
    uint32_t last_read = 0;  // activity tick (ActivityTick) of the last read
    // Exact above the watermark: every such post with a greater key whose fan-out has run is
    // in the entries. Posts at or below it may be missing (trimmed), so reads fall back to
    // pull. -1: no watermark (the inbox holds every such post). Else the watermark's time
    // shifted left by one, and in bit 0 a 1 when the watermark is the top of its millisecond
    // (id ~0, set by trims), a 0 when its id is kept apart (set by builds).
    int64_t watermark = -1;

    // Posts of visible ordinary followees, oldest first, at most R.
    const InboxBuffer& entries() const { return *this; }
    bool has_watermark() const { return watermark >= 0; }
    bool has_exact_watermark() const { return watermark >= 0 && (watermark & 1) == 0; }
    TimestampMs watermark_ts() const { return watermark >> 1; }
    bool watermark_at_top() const { return (watermark & 1) != 0; }

   private:
    friend class Inboxes;
    InboxBuffer& buffer() { return *this; }
  };

  struct Cold {
    InternalId reader = kNoInternalId;  // the owner; kNoInternalId for a free slot
    // Low 30 bits of the celebrity epoch the reader's celebrity followees were listed at
    // (0: stale).
    uint32_t celebrities_epoch : 30 = 0;
    uint32_t one_celebrity : 1 = 0;  // `side` holds the one celebrity, not a side slot
    uint32_t referenced : 1 = 0;     // read since the budget's clock hand last passed
    // Index of the side, or kNoSlot (none); when one_celebrity, that celebrity's id.
    uint32_t side = kNoSlot;
  };

  // What an empty inbox reads as (a marked reader's).
  static const Inbox kEmpty;

  // posts: the rings entries name (not owned; outlives this). R: timeline_length. Activity
  // ticks count from `now`.
  Inboxes(const PostStore& posts, uint32_t timeline_length, size_t memory_budget,
          TimestampMs active_reader_ms, TimestampMs now);

  // ---- slots ------------------------------------------------------------------------------
  static constexpr uint32_t kMarkBit = uint32_t{1} << 31;
  static constexpr uint32_t kMaxMarkTick = kNoSlot - kMarkBit - 1;  // so no mark is kNoSlot
  static bool IsPoolSlot(uint32_t word) { return word < kMarkBit; }
  static bool IsMark(uint32_t word) { return word >= kMarkBit && word != kNoSlot; }
  static uint32_t MarkTick(uint32_t mark) { return mark - kMarkBit; }
  // The reader's word: kNoSlot, a pool slot, or a mark.
  uint32_t SlotOf(InternalId reader) const {
    return reader < slot_of_.size() ? slot_of_[reader] : kNoSlot;
  }
  // REQUIRES: IsPoolSlot(slot).
  Inbox& HeaderAt(uint32_t slot) { return headers_[slot]; }
  const Cold& ColdAt(uint32_t slot) const { return cold_[slot]; }
  // The reader's header; nullptr when it has none (no inbox, or a mark).
  Inbox* Find(InternalId reader) {
    const uint32_t slot = SlotOf(reader);
    return IsPoolSlot(slot) ? &headers_[slot] : nullptr;
  }
  // REQUIRES: the reader has a header.
  Cold& ColdOf(InternalId reader) { return cold_[SlotOf(reader)]; }
  // For the fan-out, which fetches the links of the chain slot -> header -> newest entry a
  // different distance ahead for each.
  RELGRAPH_PREFETCH_HELPER void PrefetchSlot(InternalId reader) const {
    if (reader < slot_of_.size()) __builtin_prefetch(&slot_of_[reader]);
  }
  RELGRAPH_PREFETCH_HELPER void PrefetchHeader(InternalId reader) const {
    if (const uint32_t slot = SlotOf(reader); IsPoolSlot(slot)) __builtin_prefetch(&headers_[slot]);
  }
  RELGRAPH_PREFETCH_HELPER void PrefetchNewest(InternalId reader) const {
    if (const uint32_t slot = SlotOf(reader); IsPoolSlot(slot)) headers_[slot].PrefetchNewest();
  }

  // ---- lifetimes --------------------------------------------------------------------------
  // A header for a reader with no inbox. users: the graph's user count (sizes the slot array).
  Inbox& New(InternalId reader, size_t users);
  bool Free(InternalId reader);  // false when it had none
  void Drop(InternalId reader);  // Free, counted as a drop
  // Gives a marked reader a header for its empty inbox, its celebrity list current at
  // `epoch_tag` (a mark follows no celebrity). REQUIRES: IsMark(SlotOf(reader)).
  Inbox& MaterializeMark(InternalId reader, uint32_t epoch_tag);
  // Replaces the reader's header with a mark when its inbox holds nothing and it follows no
  // celebrity; true when it did. REQUIRES: the reader has a header with a current list.
  bool MarkIfEmpty(InternalId reader, uint32_t now_tick);
  // A read of a marked reader: the mark takes the tick; false (no change) when the tick is
  // past what a mark holds. REQUIRES: IsMark(SlotOf(reader)).
  bool TouchMark(InternalId reader, uint32_t now_tick);
  // A read of a reader with a header: referenced for the budget, last_read for aging.
  void Touch(InternalId reader, uint32_t now_tick) {
    const uint32_t slot = SlotOf(reader);
    cold_[slot].referenced = 1;
    headers_[slot].last_read = now_tick;
  }
  void DropMarks();  // every mark, counted as drops

  // ---- entries ----------------------------------------------------------------------------
  // `ring`: the slot of the post's author's ring. Posts at or below the watermark are not
  // kept: Insert and Erase ignore them. Past R entries, the oldest millisecond goes and the
  // watermark rises to its top.
  void Insert(Inbox& in, InternalId reader, uint32_t ring, const PostEntry& e);
  void Erase(Inbox& in, InternalId reader, uint32_t ring, const PostEntry& e);  // if present
  void EraseRing(Inbox& in, uint32_t ring);  // every entry of that ring's author
  // True when k is at or below the inbox's watermark, where it is not kept exact.
  bool Below(const Inbox& in, InternalId reader, const PostKey& k) const {
    if (in.watermark < 0) return false;
    const TimestampMs ts = in.watermark_ts();
    if (k.ts != ts) return k.ts < ts;
    return in.watermark_at_top() || k.post <= exact_watermarks_.at(SlotOf(reader));
  }
  // Fills an inbox New just made: its entries (newest first) and, when posts were left out,
  // the newest of them as its watermark.
  void Fill(InternalId reader, Inbox& in, std::span<const InboxEntry> newest_first,
            const PostEntry* watermark);

  // ---- celebrity lists and pending authors ------------------------------------------------
  std::span<const InternalId> CelebritiesOf(const Cold& c) const;  // as last listed
  // Lists the reader's visible celebrity followees again: one in the cold part itself, two
  // or more in a side, current at epoch_tag.
  void SetCelebrities(Cold& c, std::span<const InternalId> found, uint32_t epoch_tag);
  // Queues `author` for reconcile at the reader's next read and stales its celebrity list;
  // a reader with too many pending loses its inbox (a rebuild is cheaper). No-op without one.
  void AddPending(InternalId reader, InternalId author);
  std::vector<InternalId> TakePending(Cold& c);  // and clears them
  bool HasPending(const Cold& c) const;
  bool HasSide(const Cold& c) const { return SideOf(c) != nullptr; }
  void StaleAllCelebrityLists();  // after the celebrity epoch's tag wrapped

  // ---- aging and the memory budget --------------------------------------------------------
  // Reads are timed in ticks since the inboxes were made, so that the time of a reader's last
  // read fits 4 bytes. A tick is the largest power of two of milliseconds up to
  // active_reader_ms / 1024 (at least 1 ms), so "idle for more than active_reader_ms" is
  // decided to within 1/1024 of it, by a shift. Saturates (a clock before the start gives 0;
  // past 2^32 ticks, 71,000 years at the default and 49 days under 2 s, inboxes stop aging).
  uint32_t ActivityTick(TimestampMs now) const;
  bool Inactive(uint32_t last_read, uint32_t now_tick) const {
    return uint64_t{now_tick} > uint64_t{last_read} + active_ticks_;
  }
  // Over the budget, drops inboxes not read since the clock hand last passed, down to 90%
  // of it; never `keep`'s.
  void EnforceBudget(InternalId keep);

  // ---- compaction of entry blocks (compacting_pool.h) -------------------------------------
  bool moving() const { return blocks_.moving(); }
  bool Fragmented() const { return blocks_.Fragmented(); }
  void BeginMove() { blocks_.BeginMove(); }
  size_t MoveSome(size_t max_moves);  // returns the moves made

  // ---- counts -----------------------------------------------------------------------------
  size_t count() const { return count_; }  // headers and marks
  size_t marks() const { return marks_; }
  size_t entries() const { return entries_; }
  uint64_t inserts() const { return inserts_; }
  uint64_t drops() const { return drops_; }
  size_t live_bytes() const { return live_bytes_; }  // what the budget counts
  size_t MemoryBytes() const;                        // all of it, slack included
  InboxMemory MemoryBreakdown() const;               // MemoryBytes by part; O(inboxes)

  // Walks every inbox against the rules (sorted, bounded, above its watermark, entries of
  // retained or leaving posts, counts equal to a recount); kCorruption naming the first
  // broken. Feed adds its own rules per header and per mark. `name` gives a user's name for
  // messages. O(inboxes + entries).
  using HeaderRule = std::function<Status(const Cold&, const std::string& who)>;
  using MarkRule = std::function<Status(InternalId reader)>;
  Status CheckInvariants(const std::function<std::string(InternalId)>& name, size_t users,
                         const HeaderRule& header_rule, const MarkRule& mark_rule) const;

 private:
  struct Side : IdListPair {
    std::span<const InternalId> celebrities() const { return first(); }
    std::span<const InternalId> pending() const { return second(); }
    size_t MemoryBytes() const { return sizeof(Side) + BlockBytes(); }
  };

  static uint32_t MarkOf(uint32_t tick) { return kMarkBit | tick; }  // tick <= kMaxMarkTick
  const Side* SideOf(const Cold& c) const {
    return c.one_celebrity || c.side == kNoSlot ? nullptr : &sides_[c.side];
  }
  Side* SideOf(const Cold& c) { return const_cast<Side*>(std::as_const(*this).SideOf(c)); }
  Side& EnsureSide(Cold& c);  // made if missing; a celebrity kept in c moves into it
  void FreeSide(Cold& c);     // gives the side slot back, or forgets c's one celebrity
  void ReleaseSideIfEmpty(Cold& c);
  size_t SideBytes(const Cold& c) const;  // its side's record and block; 0 with none
  size_t BytesOf(const Inbox& in, const Cold& c) const;
  void TrimOldest(Inbox& in, InternalId reader);
  size_t ExactWatermarkBytes() const;  // exact_watermarks_, estimated
  size_t SideSlackBytes() const;       // side records and side-pool space not in use
  size_t SlotBytes() const;            // the slot array and the free lists
  Status CheckEntries(const Inbox& in, const Cold& c, const std::string& who,
                      const std::function<std::string(InternalId)>& name) const;

  const PostStore& posts_;
  const uint32_t r_;
  const size_t budget_;
  const TimestampMs tick_base_;  // ticks count from here
  const int tick_shift_;         // a tick is 2^tick_shift_ milliseconds
  const uint32_t active_ticks_;  // active_reader_ms in ticks
  // Entry blocks, by inbox slot: every call on a buffer passes For(its slot), so that a move
  // into a fresh pool can run between calls. Inboxes grow with few copies: they grow in the
  // fan-out, whose throughput the copies of tight steps cost 3-6% (docs/feed.md).
  CompactingPool blocks_{sizeof(InboxEntry), BlockPool::Growth::kFewCopies};
  BlockPool side_pool_{IdListPair::kEntryBytes};
  ChunkedArray<Inbox> headers_;
  ChunkedArray<Cold> cold_;
  std::vector<uint32_t> slot_of_;  // by reader internal id: the reader's word
  std::vector<uint32_t> free_slots_;
  std::unordered_map<uint32_t, PostId> exact_watermarks_;  // by slot
  std::vector<Side> sides_;
  std::vector<uint32_t> free_sides_;
  size_t live_bytes_ = 0;  // headers, entry buffers, side data of live inboxes
  size_t entries_ = 0;
  size_t count_ = 0;  // headers and marks
  size_t marks_ = 0;
  size_t clock_hand_ = 0;  // the budget's next slot to look at
  uint64_t inserts_ = 0, drops_ = 0;
};

}  // namespace relgraph
