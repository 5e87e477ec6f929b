#include "engine/feed/inboxes.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "engine/mem/slot_array.h"

namespace relgraph {

namespace {

constexpr size_t kMaxPendingPerInbox = 64;  // past this, dropping the inbox is cheaper

Status Broken(const std::string& what) {
  return Status::Corruption("feed invariant: " + what);
}

}  // namespace

const Inboxes::Inbox Inboxes::kEmpty;

Inboxes::Inboxes(const PostStore& posts, uint32_t timeline_length, size_t memory_budget,
                 TimestampMs active_reader_ms, TimestampMs now)
    : posts_(posts),
      r_(timeline_length),
      budget_(memory_budget),
      tick_base_(now),
      tick_shift_(
          std::bit_width(static_cast<uint64_t>(std::max<TimestampMs>(1, active_reader_ms / 1024))) -
          1),
      active_ticks_(static_cast<uint32_t>(active_reader_ms >> tick_shift_)) {
  static_assert(sizeof(Inbox) == 32 && sizeof(Cold) == 12);
}

uint32_t Inboxes::ActivityTick(TimestampMs now) const {
  if (now <= tick_base_) return 0;
  return static_cast<uint32_t>(std::min<TimestampMs>((now - tick_base_) >> tick_shift_,
                                                     std::numeric_limits<uint32_t>::max()));
}

// ---- lifetimes --------------------------------------------------------------------------------

Inboxes::Inbox& Inboxes::New(InternalId reader, size_t users) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(headers_.size());
    headers_.emplace_back();
    cold_.emplace_back();
  }
  GrowSlotArray(slot_of_, reader, users);
  slot_of_[reader] = slot;
  ++count_;
  Cold& c = cold_[slot];
  c.reader = reader;
  c.referenced = 1;
  live_bytes_ += sizeof(Inbox) + sizeof(Cold);
  return headers_[slot];
}

bool Inboxes::Free(InternalId reader) {
  const uint32_t slot = SlotOf(reader);
  if (slot == kNoSlot) return false;
  if (IsMark(slot)) {
    slot_of_[reader] = kNoSlot;
    --count_;
    --marks_;
    return true;
  }
  Inbox& in = headers_[slot];
  Cold& c = cold_[slot];
  live_bytes_ -= BytesOf(in, c);
  entries_ -= in.entries().size();
  --count_;
  FreeSide(c);
  if (in.has_exact_watermark()) exact_watermarks_.erase(slot);
  in.buffer().Clear(blocks_.For(slot));
  in.last_read = 0;
  in.watermark = -1;
  c = Cold{};
  free_slots_.push_back(slot);
  slot_of_[reader] = kNoSlot;
  return true;
}

void Inboxes::Drop(InternalId reader) {
  if (Free(reader)) ++drops_;
}

Inboxes::Inbox& Inboxes::MaterializeMark(InternalId reader, uint32_t epoch_tag) {
  const uint32_t tick = MarkTick(slot_of_[reader]);
  --count_;  // New counts it again
  --marks_;
  Inbox& in = New(reader, slot_of_.size());
  in.last_read = tick;
  ColdOf(reader).celebrities_epoch = epoch_tag;
  return in;
}

bool Inboxes::MarkIfEmpty(InternalId reader, uint32_t now_tick) {
  const uint32_t slot = SlotOf(reader);
  const Inbox& in = headers_[slot];
  // No side, and no celebrity in the cold part (one_celebrity keeps it in `side` too).
  if (!in.entries().empty() || in.has_watermark() || cold_[slot].side != kNoSlot ||
      now_tick > kMaxMarkTick)
    return false;
  Free(reader);
  slot_of_[reader] = MarkOf(now_tick);
  ++count_;
  ++marks_;
  return true;
}

bool Inboxes::TouchMark(InternalId reader, uint32_t now_tick) {
  if (now_tick > kMaxMarkTick) return false;
  slot_of_[reader] = MarkOf(now_tick);
  return true;
}

void Inboxes::DropMarks() {
  for (size_t u = 0; u < slot_of_.size(); ++u) {
    if (IsMark(slot_of_[u])) Drop(static_cast<InternalId>(u));
  }
}

// ---- entries ----------------------------------------------------------------------------------

void Inboxes::Insert(Inbox& in, InternalId reader, uint32_t ring, const PostEntry& e) {
  if (Below(in, reader, e.key())) return;  // below the exact range
  const size_t bytes = in.entries().MemoryBytes();
  if (!in.buffer().Insert(InboxEntry::Of(ring, e), e.id, r_, blocks_.For(SlotOf(reader)),
                          [this](const InboxEntry& x) { return posts_.IdOfEntry(x); }))
    return;
  ++inserts_;
  ++entries_;
  if (in.entries().size() > r_) TrimOldest(in, reader);
  live_bytes_ += in.entries().MemoryBytes() - bytes;
}

// The oldest entry goes with every other entry of its millisecond, and the watermark rises to
// the top of that millisecond. The dropped entry's exact key would need its id, a ring lookup
// (two cache misses) for every insert into a full inbox; the few more entries this drops are
// rare, and a read that needs them falls back to pull.
void Inboxes::TrimOldest(Inbox& in, InternalId reader) {
  const TimestampMs dropped = in.entries().oldest().ts();
  do {
    in.buffer().PopOldest();
    --entries_;
  } while (!in.entries().empty() && in.entries().oldest().ts() == dropped);
  // Every entry is above the watermark, so it rises: an exact one becomes a top one.
  if (in.has_exact_watermark()) exact_watermarks_.erase(SlotOf(reader));
  if (in.watermark < 0 || in.watermark_ts() < dropped ||
      (in.watermark_ts() == dropped && !in.watermark_at_top()))
    in.watermark = (dropped << 1) | 1;
}

void Inboxes::Erase(Inbox& in, InternalId reader, uint32_t ring, const PostEntry& e) {
  if (Below(in, reader, e.key())) return;  // nothing is kept there
  const uint32_t at = in.entries().Find(InboxEntry::Of(ring, e));
  if (at < in.entries().size()) {
    in.buffer().EraseAt(at);
    --entries_;
  }
}

void Inboxes::EraseRing(Inbox& in, uint32_t ring) {
  entries_ -= in.buffer().RemoveIf([&](const InboxEntry& x) { return x.ring == ring; });
}

void Inboxes::Fill(InternalId reader, Inbox& in, std::span<const InboxEntry> newest_first,
                   const PostEntry* watermark) {
  const uint32_t slot = SlotOf(reader);
  if (watermark != nullptr) {
    in.watermark = watermark->ts() << 1;  // its id kept apart
    exact_watermarks_[slot] = watermark->id;
  }
  // Appended oldest first.
  BlockPool& blocks = blocks_.For(slot);
  for (auto it = newest_first.rbegin(); it != newest_first.rend(); ++it)
    in.buffer().InsertAt(in.entries().size(), *it, r_, blocks);
  entries_ += in.entries().size();
  live_bytes_ += in.entries().MemoryBytes();
}

// ---- celebrity lists and pending authors ------------------------------------------------------

size_t Inboxes::SideBytes(const Cold& c) const {
  const Side* side = SideOf(c);
  return side != nullptr ? side->MemoryBytes() : 0;
}

size_t Inboxes::BytesOf(const Inbox& in, const Cold& c) const {
  return sizeof(Inbox) + sizeof(Cold) + in.entries().MemoryBytes() + SideBytes(c);
}

Inboxes::Side& Inboxes::EnsureSide(Cold& c) {
  const InternalId one = c.one_celebrity ? c.side : kNoInternalId;
  if (one != kNoInternalId) {
    c.one_celebrity = 0;
    c.side = kNoSlot;
  }
  if (c.side == kNoSlot) {
    if (!free_sides_.empty()) {
      c.side = free_sides_.back();
      free_sides_.pop_back();
    } else {
      c.side = static_cast<uint32_t>(sides_.size());
      // Grow by a quarter, not double: unused capacity here is counted as inbox memory.
      if (sides_.size() == sides_.capacity())
        sides_.reserve(sides_.size() + sides_.size() / 4 + 16);
      sides_.emplace_back();
    }
  }
  if (one != kNoInternalId) sides_[c.side].AddFirst(one, side_pool_);
  return sides_[c.side];
}

void Inboxes::FreeSide(Cold& c) {
  if (c.one_celebrity) {
    c.one_celebrity = 0;
    c.side = kNoSlot;
    return;
  }
  if (c.side == kNoSlot) return;
  sides_[c.side].Clear(side_pool_);
  free_sides_.push_back(c.side);
  c.side = kNoSlot;
}

void Inboxes::ReleaseSideIfEmpty(Cold& c) {
  const Side* side = SideOf(c);
  if (side != nullptr && side->empty()) FreeSide(c);
}

std::span<const InternalId> Inboxes::CelebritiesOf(const Cold& c) const {
  if (c.one_celebrity) return {&c.side, 1};
  const Side* side = SideOf(c);
  return side != nullptr ? side->celebrities() : std::span<const InternalId>{};
}

bool Inboxes::HasPending(const Cold& c) const {
  const Side* side = SideOf(c);
  return side != nullptr && !side->pending().empty();
}

void Inboxes::SetCelebrities(Cold& c, std::span<const InternalId> found, uint32_t epoch_tag) {
  const size_t before = SideBytes(c);
  if (c.one_celebrity) {
    FreeSide(c);
  } else if (Side* side = SideOf(c); side != nullptr) {
    side->ClearFirst();
    ReleaseSideIfEmpty(c);  // so that one celebrity can go in the cold part
  }
  if (found.size() == 1 && SideOf(c) == nullptr) {
    c.one_celebrity = 1;
    c.side = found[0];
  } else if (!found.empty()) {
    Side& side = EnsureSide(c);
    for (InternalId f : found) side.AddFirst(f, side_pool_);
  }
  c.celebrities_epoch = epoch_tag;
  live_bytes_ += SideBytes(c);
  live_bytes_ -= before;
}

void Inboxes::AddPending(InternalId reader, InternalId author) {
  const uint32_t word = SlotOf(reader);
  if (word == kNoSlot) return;
  if (IsMark(word)) MaterializeMark(reader, 0);
  Cold& c = ColdOf(reader);
  c.celebrities_epoch = 0;
  if (const Side* side = SideOf(c); side != nullptr) {
    if (std::ranges::find(side->pending(), author) != side->pending().end()) return;
    if (side->pending().size() >= kMaxPendingPerInbox) {
      Drop(reader);
      return;
    }
  }
  const size_t before = SideBytes(c);
  EnsureSide(c).AddSecond(author, side_pool_);
  live_bytes_ += SideBytes(c) - before;
}

std::vector<InternalId> Inboxes::TakePending(Cold& c) {
  Side* side = SideOf(c);
  if (side == nullptr) return {};
  std::vector<InternalId> authors(side->pending().begin(), side->pending().end());
  side->ClearSecond();  // keeps the block: the bytes do not change
  return authors;
}

void Inboxes::StaleAllCelebrityLists() {
  for (size_t slot = 0; slot < cold_.size(); ++slot) cold_[slot].celebrities_epoch = 0;
}

// ---- the memory budget and compaction ---------------------------------------------------------

// CLOCK: the hand sweeps the pool; an inbox read since the hand's last pass loses its mark
// and stays, one not read since is dropped. Two passes visit every inbox with its mark clear,
// so the loop ends having reached the target or dropped all but `keep`.
void Inboxes::EnforceBudget(InternalId keep) {
  if (live_bytes_ <= budget_) return;
  const size_t target = budget_ / 10 * 9;
  for (size_t steps = 2 * cold_.size(); steps > 0 && live_bytes_ > target; --steps) {
    if (clock_hand_ >= cold_.size()) clock_hand_ = 0;
    Cold& c = cold_[clock_hand_++];
    if (c.reader == kNoInternalId || c.reader == keep) continue;
    if (c.referenced != 0) {
      c.referenced = 0;
    } else {
      Drop(c.reader);
    }
  }
}

size_t Inboxes::MoveSome(size_t max_moves) {
  return blocks_.MoveSome(
      headers_.size(), [&](size_t slot) -> InboxBuffer& { return headers_[slot].buffer(); },
      &live_bytes_, max_moves);
}

// ---- memory -----------------------------------------------------------------------------------

size_t Inboxes::ExactWatermarkBytes() const {
  constexpr size_t kNode = sizeof(void*) + sizeof(std::pair<const uint32_t, PostId>) + 8;
  return exact_watermarks_.size() * kNode + exact_watermarks_.bucket_count() * sizeof(void*);
}

size_t Inboxes::SideSlackBytes() const {
  const size_t live_sides = sides_.size() - free_sides_.size();
  return (side_pool_.MemoryBytes() - side_pool_.LiveBytes()) +
         (sides_.capacity() - live_sides) * sizeof(Side);
}

size_t Inboxes::SlotBytes() const {
  return (slot_of_.capacity() + free_slots_.capacity() + free_sides_.capacity()) * sizeof(uint32_t);
}

size_t Inboxes::MemoryBytes() const {
  return live_bytes_ + (blocks_.MemoryBytes() - blocks_.LiveBytes()) +
         (headers_.MemoryBytes() + cold_.MemoryBytes() -
          (count_ - marks_) * (sizeof(Inbox) + sizeof(Cold))) +
         SideSlackBytes() + SlotBytes() + ExactWatermarkBytes();
}

InboxMemory Inboxes::MemoryBreakdown() const {
  InboxMemory m;
  for (size_t slot = 0; slot < headers_.size(); ++slot) {
    const Cold& c = cold_[slot];
    if (c.reader == kNoInternalId) continue;
    ++m.headers;
    m.entry_bytes += headers_[slot].entries().MemoryBytes();
    m.side_bytes += SideBytes(c);
  }
  m.entry_bytes += blocks_.MemoryBytes() - blocks_.LiveBytes();
  m.header_bytes = headers_.MemoryBytes() + cold_.MemoryBytes() + ExactWatermarkBytes();
  m.side_bytes += SideSlackBytes();
  m.slot_bytes = SlotBytes();
  return m;
}

// ---- checks -----------------------------------------------------------------------------------

// One inbox's entries: each names a ring, a retained or leaving post (or is of an author
// queued for reconcile), in order, above the watermark.
Status Inboxes::CheckEntries(const Inbox& in, const Cold& c, const std::string& who,
                             const std::function<std::string(InternalId)>& name) const {
  const Side* side = SideOf(c);
  // Entries of authors queued for reconcile may be stale until the reader's next read
  // reconciles them (before it merges): a removal's fan-out skipped a reader who had
  // stopped following. Their slots may hold no post, or a newer post of the same author
  // (the one that trimmed theirs), so they are not checked.
  const std::span<const InternalId> pending =
      side != nullptr ? side->pending() : std::span<const InternalId>{};
  PostKey previous{-1, 0};
  for (uint32_t k = 0; k < in.entries().size(); ++k) {
    const InboxEntry& x = in.entries()[k];
    if (x.ring >= posts_.ring_count()) return Broken(who + " holds an entry of no ring");
    const InternalId author = posts_.RingAt(x.ring).owner;
    if (std::ranges::find(pending, author) != pending.end()) continue;
    const PostId id = posts_.IdOfEntry(x);
    if (id == 0) {
      return Broken(who + " holds an entry of user " + name(author) + " at time " +
                    std::to_string(x.ts()) + " whose post is neither retained nor leaving");
    }
    const PostKey key{x.ts(), id};
    if (k > 0 && !(previous < key)) return Broken(who + " is out of order at " + std::to_string(k));
    previous = key;
    if (in.has_watermark() && (key.ts < in.watermark_ts() || Below(in, c.reader, key)))
      return Broken(who + " holds an entry at or below its watermark");
  }
  return Status::OK();
}

Status Inboxes::CheckInvariants(const std::function<std::string(InternalId)>& name, size_t users,
                                const HeaderRule& header_rule, const MarkRule& mark_rule) const {
  size_t entries = 0, count = 0, exact_watermark_count = 0, live_bytes = 0;
  CompactingPool::Tally blocks(blocks_);
  if (cold_.size() != headers_.size()) return Broken("the two pools of inbox parts differ in size");
  for (size_t slot = 0; slot < headers_.size(); ++slot) {
    const Inbox& in = headers_[slot];
    const Cold& c = cold_[slot];
    if (c.reader == kNoInternalId) {
      if (in.entries().size() != 0 || in.has_watermark() || c.side != kNoSlot)
        return Broken("free inbox slot " + std::to_string(slot) + " holds state");
      continue;
    }
    ++count;
    const std::string who = "the inbox of user " + name(c.reader);
    if (SlotOf(c.reader) != slot) return Broken(who + " is not the one its slot names");
    RELGRAPH_RETURN_IF_ERROR(header_rule(c, who));
    if (in.entries().size() > r_) return Broken(who + " is over R");
    const bool exact = in.has_exact_watermark();
    if (exact != exact_watermarks_.contains(static_cast<uint32_t>(slot)))
      return Broken(who + (exact ? " lacks" : " has") + " a watermark id kept apart");
    exact_watermark_count += exact;
    if (!blocks.Add(slot, in.entries().pool_block(), in.entries().MemoryBytes()))
      return Broken(who + " has its block in the wrong pool");
    RELGRAPH_RETURN_IF_ERROR(CheckEntries(in, c, who, name));
    entries += in.entries().size();
    live_bytes += BytesOf(in, c);
  }
  // Marks: inboxes that hold nothing.
  size_t marks = 0;
  for (size_t u = 0; u < slot_of_.size(); ++u) {
    if (!IsMark(slot_of_[u])) continue;
    ++count;
    ++marks;
    if (u >= users)
      return Broken("internal id " + std::to_string(u) + " has a mark for an inbox but no user");
    RELGRAPH_RETURN_IF_ERROR(mark_rule(static_cast<InternalId>(u)));
  }
  if (!blocks.Balanced())
    return Broken("the inboxes' blocks disagree with their pools' live bytes");
  if (exact_watermark_count != exact_watermarks_.size())
    return Broken("watermark ids are kept for inboxes that have none");
  if (marks != marks_) {
    return Broken("the count of inboxes kept as marks (" + std::to_string(marks_) +
                  ") disagrees with a recount (" + std::to_string(marks) + ")");
  }
  if (entries != entries_ || count != count_) {
    return Broken("inbox counters (" + std::to_string(count_) + " inboxes, " +
                  std::to_string(entries_) + " entries) disagree with a recount (" +
                  std::to_string(count) + ", " + std::to_string(entries) + ")");
  }
  // The memory budget evicts by this count.
  if (live_bytes != live_bytes_) {
    return Broken("the count of inbox bytes (" + std::to_string(live_bytes_) +
                  ") disagrees with a recount (" + std::to_string(live_bytes) + ")");
  }
  if (MemoryBreakdown().total() != MemoryBytes())
    return Broken("the parts of inbox memory do not add up to its total");
  return Status::OK();
}

}  // namespace relgraph
