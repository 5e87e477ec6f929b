#include "engine/feed/post_buffer.h"

namespace relgraph {

uint32_t PostBuffer::LowerBound(const PostKey& k) const {
  return PartitionPoint(0, size(), [&](const PostEntry& e) { return e.LessThan(k); });
}

uint32_t PostBuffer::Find(const PostKey& k) const {
  const uint32_t i = LowerBound(k);
  return (i < size() && (*this)[i].key() == k) ? i : size();
}

uint32_t PostBuffer::FindId(PostId id) const {
  for (uint32_t i = 0; i < size(); ++i) {
    if ((*this)[i].id == id) return i;
  }
  return size();
}

uint32_t PostBuffer::FindSeq(TimestampMs ts, uint16_t seq) const {
  const uint32_t n = size();
  const uint32_t guess = SeqGuess(seq);
  for (uint32_t i = guess; i < n && i <= guess + 2; ++i) {
    if ((*this)[i].seq() == seq && (*this)[i].ts() == ts) return i;
  }
  // Gallop from the newest end: every entry at index >= hi has time >= ts, and the first such
  // entry is in [lo, hi].
  uint32_t lo = 0, hi = n, step = 1;
  while (hi > 0) {
    const uint32_t probe = hi > step ? hi - step : 0;
    if ((*this)[probe].ts() < ts) {
      lo = probe + 1;
      break;
    }
    hi = probe;
    step *= 2;
  }
  lo = PartitionPoint(lo, hi, [&](const PostEntry& e) { return e.ts() < ts; });
  for (uint32_t i = lo; i < n && (*this)[i].ts() == ts; ++i) {
    if ((*this)[i].seq() == seq) return i;
  }
  return n;
}

// Insert when e is not newer than the newest entry: find its place.
bool PostBuffer::InsertInside(const PostEntry& e, uint32_t bound, BlockPool& slab) {
  const uint32_t pos = LowerBound(e.key());
  if (pos < size() && (*this)[pos].key() == e.key()) return false;
  InsertAt(pos, e, bound, slab);
  return true;
}

}  // namespace relgraph
