// Feed::CheckInvariants: a full walk of the feed's state against the rules the rest of the
// feed relies on (docs/feed.md), for tests and `relgraph-admin verify`. O(posts + inbox
// entries); each failure names what is wrong.
#include <algorithm>
#include <bit>
#include <string>
#include <vector>

#include "engine/feed/feed_internal.h"

namespace relgraph {

namespace {

Status Broken(const std::string& what) {
  return Status::Corruption("feed invariant: " + what);
}

}  // namespace

std::vector<InternalId> Feed::ScanCelebrities(const Graph& g, InternalId reader) const {
  std::vector<InternalId> out;
  ForEachVisibleCelebrity(g, reader, [&](InternalId f) { out.push_back(f); });
  std::sort(out.begin(), out.end());
  return out;
}

// One inbox's entries: each names a ring, a retained or leaving post (or is of an author
// queued for reconcile), in order, above the watermark.
Status Feed::CheckInboxEntries(const Graph& g, const Inbox& in, const InboxCold& c,
                               const std::string& who) const {
  const auto name = [&](InternalId u) { return std::to_string(g.ExternalOf(u)); };
  const InboxSide* side = SideOf(c);
  // Entries of authors queued for reconcile may be stale until the reader's next read
  // reconciles them (before it merges): a removal's fan-out skipped a reader who had
  // stopped following. Their ids may be unknown, so order is checked between known ids.
  const std::span<const InternalId> pending =
      side != nullptr ? side->pending() : std::span<const InternalId>{};
  PostKey previous{-1, 0};
  for (uint32_t k = 0; k < in.entries().size(); ++k) {
    const InboxEntry& x = in.entries()[k];
    if (x.ring >= posts_.ring_count()) return Broken(who + " holds an entry of no ring");
    const InternalId author = posts_.RingAt(x.ring).owner;
    const PostId id = posts_.IdOfEntry(x);
    if (id == 0 && std::ranges::find(pending, author) == pending.end()) {
      return Broken(who + " holds an entry of user " + name(author) + " at time " +
                    std::to_string(x.ts()) + " whose post is neither retained nor leaving");
    }
    const PostKey key{x.ts(), id};
    if (key.ts < previous.ts ||
        (id != 0 && previous.post != 0 && key.ts == previous.ts && !(previous < key)))
      return Broken(who + " is out of order at " + std::to_string(k));
    if (key.ts != previous.ts || id != 0) previous = key;
    if (in.has_watermark() && (key.ts < in.watermark_ts() || (id != 0 && Below(in, c.reader, key))))
      return Broken(who + " holds an entry at or below its watermark");
  }
  return Status::OK();
}

Status Feed::CheckInvariants(const Graph& g) const {
  const auto name = [&](InternalId u) { return std::to_string(g.ExternalOf(u)); };
  RELGRAPH_RETURN_IF_ERROR(posts_.CheckInvariants(g));
  RELGRAPH_RETURN_IF_ERROR(audience_.CheckInvariants(g));
  // Inboxes: bounded, sorted, above their watermark, and every entry a retained post or one
  // still leaving (reads name an entry's author only from retained posts).
  size_t entries = 0, inboxes = 0, exact_watermark_count = 0, live_bytes = 0;
  CompactingPool::Tally inbox_blocks(inbox_blocks_);
  if (inbox_cold_.size() != inbox_pool_.size())
    return Broken("the two pools of inbox parts differ in size");
  for (size_t slot = 0; slot < inbox_pool_.size(); ++slot) {
    const Inbox& in = inbox_pool_[slot];
    const InboxCold& c = inbox_cold_[slot];
    if (c.reader == kNoInternalId) {
      if (in.entries().size() != 0 || in.has_watermark() || c.side != kNoSlot)
        return Broken("free inbox slot " + std::to_string(slot) + " holds state");
      continue;
    }
    ++inboxes;
    const std::string who = "the inbox of user " + name(c.reader);
    if (SlotOf(c.reader) != slot) return Broken(who + " is not the one its slot names");
    const InboxSide* side = SideOf(c);
    if (c.celebrities_epoch == audience_.EpochTag()) {
      const std::span<const InternalId> cached = CelebritiesOf(c);
      std::vector<InternalId> sorted(cached.begin(), cached.end());
      std::sort(sorted.begin(), sorted.end());
      if (sorted != ScanCelebrities(g, c.reader))
        return Broken(who + " lists other celebrity followees than the reader has");
      if (side != nullptr && cached.size() == 1 && side->pending().empty())
        return Broken(who + " keeps a side for one celebrity");
    }
    if (in.entries().size() > options_.timeline_length) return Broken(who + " is over R");
    const bool exact = in.has_exact_watermark();
    if (exact != exact_watermarks_.contains(static_cast<uint32_t>(slot)))
      return Broken(who + (exact ? " lacks" : " has") + " a watermark id kept apart");
    exact_watermark_count += exact;
    if (!inbox_blocks.Add(slot, in.entries().pool_block(), in.entries().MemoryBytes()))
      return Broken(who + " has its block in the wrong pool");
    RELGRAPH_RETURN_IF_ERROR(CheckInboxEntries(g, in, c, who));
    entries += in.entries().size();
    live_bytes += InboxBytes(in, c);
  }
  // Marks: inboxes that hold nothing, of readers who follow no celebrity they may see.
  size_t marks = 0;
  for (size_t u = 0; u < inbox_of_.size(); ++u) {
    if (!IsMark(inbox_of_[u])) continue;
    ++inboxes;
    ++marks;
    const auto reader = static_cast<InternalId>(u);
    if (u >= g.user_count())
      return Broken("internal id " + std::to_string(u) + " has a mark for an inbox but no user");
    if (!ScanCelebrities(g, reader).empty())
      return Broken("user " + name(reader) + " has a mark for an inbox but follows a celebrity");
  }
  if (!inbox_blocks.Balanced())
    return Broken("the inboxes' blocks disagree with their pools' live bytes");
  if (exact_watermark_count != exact_watermarks_.size())
    return Broken("watermark ids are kept for inboxes that have none");
  if (marks != marks_) {
    return Broken("the count of inboxes kept as marks (" + std::to_string(marks_) +
                  ") disagrees with a recount (" + std::to_string(marks) + ")");
  }
  if (entries != inbox_entries_ || inboxes != inboxes_) {
    return Broken("inbox counters (" + std::to_string(inboxes_) + " inboxes, " +
                  std::to_string(inbox_entries_) + " entries) disagree with a recount (" +
                  std::to_string(inboxes) + ", " + std::to_string(entries) + ")");
  }
  // The memory budget evicts by this count.
  if (live_bytes != inbox_bytes_) {
    return Broken("the count of inbox bytes (" + std::to_string(inbox_bytes_) +
                  ") disagrees with a recount (" + std::to_string(live_bytes) + ")");
  }
  if (InboxMemoryBreakdown().total() != Stats().inbox_bytes)
    return Broken("the parts of inbox memory do not add up to its total");
  return Status::OK();
}

}  // namespace relgraph
