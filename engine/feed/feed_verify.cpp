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

Status Feed::CheckInvariants(const Graph& g) const {
  const auto name = [&](InternalId u) { return std::to_string(g.ExternalOf(u)); };
  // Rings: sorted, no two posts of a time with one sequence number, each post held by exactly
  // its author in the index.
  size_t ring_posts = 0;
  size_t rings = 0;
  CompactingPool::Tally ring_blocks(ring_blocks_);
  for (size_t i = 0; i < ring_of_.size(); ++i) {
    const auto u = static_cast<InternalId>(i);
    if (RingOf(u) == nullptr) continue;
    ++rings;
    if (RingAt(ring_of_[u]).owner != u)
      return Broken("the ring of user " + name(u) + " names another owner");
    const PostBuffer& ring = *RingOf(u);
    if (!ring_blocks.Add(ring_of_[u], ring.pool_block(), ring.MemoryBytes()))
      return Broken("the ring of user " + name(u) + " has its block in the wrong pool");
    for (uint32_t k = 0; k < ring.size(); ++k) {
      const PostEntry& e = ring[k];
      if (k > 0 && !PostEntry::Less(ring[k - 1], e))
        return Broken("posts of user " + name(u) + " are out of order at " + std::to_string(k));
      if (ring.FindSeq(e.ts(), e.seq()) != k) {
        return Broken("post " + std::to_string(e.id) + " of user " + name(u) +
                      " shares its time and sequence number");
      }
      if (HolderOf(e.id) != u) {
        return Broken("the post index does not name user " + name(u) + " for its post " +
                      std::to_string(e.id));
      }
    }
    ring_posts += ring.size();
  }
  if (rings != rings_.size()) return Broken("a ring slot belongs to no user");
  if (!ring_blocks.Balanced())
    return Broken("the rings' blocks disagree with their pools' live bytes");
  RELGRAPH_RETURN_IF_ERROR(audience_.CheckInvariants(g));
  const size_t indexed = IndexedPosts();
  if (indexed != ring_posts) {
    return Broken("the post index holds " + std::to_string(indexed) + " posts, the rings " +
                  std::to_string(ring_posts));
  }
  for (const auto& [post, leaving] : retracting_) {
    if (HolderOf(post) != kNoInternalId)
      return Broken("post " + std::to_string(post) + " is retained and also leaving timelines");
    if (LeavingIdOf(InboxEntry::Of(leaving.ring, leaving.entry)) != post)
      return Broken("post " + std::to_string(post) + " is leaving but not found by its entry");
    if (RingEntry(InboxEntry::Of(leaving.ring, leaving.entry)) != nullptr) {
      return Broken("post " + std::to_string(post) +
                    " is leaving, and a retained post has its time and sequence number");
    }
  }
  if (leaving_by_seq_.size() != retracting_.size())
    return Broken("the two maps of posts leaving timelines differ in size");
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
    // Entries of authors queued for reconcile may be stale until the reader's next read
    // reconciles them (before it merges): a removal's fan-out skipped a reader who had
    // stopped following. Their ids may be unknown, so order is checked between known ids.
    const std::span<const InternalId> pending =
        side != nullptr ? side->pending() : std::span<const InternalId>{};
    PostKey previous{-1, 0};
    for (uint32_t k = 0; k < in.entries().size(); ++k) {
      const InboxEntry& x = in.entries()[k];
      if (x.ring >= rings_.size()) return Broken(who + " holds an entry of no ring");
      const InternalId author = RingAt(x.ring).owner;
      const PostId id = IdOfEntry(x);
      if (id == 0 && std::ranges::find(pending, author) == pending.end()) {
        return Broken(who + " holds an entry of user " + name(author) + " at time " +
                      std::to_string(x.ts()) + " whose post is neither retained nor leaving");
      }
      const PostKey key{x.ts(), id};
      if (key.ts < previous.ts ||
          (id != 0 && previous.post != 0 && key.ts == previous.ts && !(previous < key)))
        return Broken(who + " is out of order at " + std::to_string(k));
      if (key.ts != previous.ts || id != 0) previous = key;
      if (in.has_watermark() &&
          (key.ts < in.watermark_ts() || (id != 0 && Below(in, c.reader, key))))
        return Broken(who + " holds an entry at or below its watermark");
    }
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
