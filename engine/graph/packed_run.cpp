#include "engine/graph/packed_run.h"

#include <algorithm>
#include <bit>
#include <vector>

#include "engine/graph/id_map.h"  // EntryOrder reads external ids

namespace relgraph {
namespace {

// The entries of a run being rebuilt (a re-encode decodes into it): one per thread, so the
// rare re-encode does not allocate.
std::vector<EdgeEntry>& Scratch() {
  thread_local std::vector<EdgeEntry> scratch;
  return scratch;
}

}  // namespace

size_t PackedRun::BlockBytes() const {
  if (block_ == nullptr) return 0;
  // As the slab counts a block: its units, rounded up to 4 bytes.
  return (size_t{SlabAllocator::CapacityFor(Units(size_, fields().width))} * sizeof(EdgeEntry) +
          3) &
         ~size_t{3};
}

size_t PackedRun::Rank(const EntryKey& k, const EntryOrder& order) const {
  const PackedFields f = fields();
  size_t lo = 0, hi = size_;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    const auto i = static_cast<uint32_t>(mid);
    const TimestampMs ts = f.Ts(i);
    const bool less = ts != k.ts ? ts < k.ts : order.External(f.Peer(i)) < k.user;
    if (less)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

size_t PackedRun::Find(const EntryKey& k, const EntryOrder& order) const {
  const size_t i = Rank(k, order);
  if (i == size_) return size_;
  const PackedFields f = fields();
  const auto at = static_cast<uint32_t>(i);
  return f.Ts(at) == k.ts && order.External(f.Peer(at)) == k.user ? i : size_;
}

size_t PackedRun::FindPeer(InternalId peer) const {
  const PackedFields f = fields();
  for (uint32_t i = 0; i < size_; ++i) {
    if (f.Peer(i) == peer) return i;
  }
  return size_;
}

uint32_t PackedRun::CopyDescending(size_t end, uint32_t limit, EdgeEntry* out) const {
  const PackedFields f = fields();
  const auto n = static_cast<uint32_t>(std::min<size_t>(end, limit));
  for (uint32_t i = 0; i < n; ++i) out[i] = f.At(static_cast<uint32_t>(end - 1 - i));
  return n;
}

void PackedRun::Decode(EdgeEntry* out) const {
  const PackedFields f = fields();
  for (uint32_t i = 0; i < size_; ++i) out[i] = f.At(i);
}

void PackedRun::ResizeSameWidths(const PackedFields& f, uint32_t n, SlabAllocator& slab) {
  const uint32_t old_units = Units(size_, f.width);
  const uint32_t new_units = Units(n, f.width);
  if (SlabAllocator::CapacityFor(old_units) != SlabAllocator::CapacityFor(new_units)) {
    char* fresh = static_cast<char*>(slab.AllocateBlock(new_units));
    const uint64_t keep_bits = uint64_t{std::min(size_, n)} * f.width;
    std::memcpy(fresh, block_, 8 + (keep_bits + 7) / 8);
    slab.FreeBlock(block_, old_units);
    block_ = fresh;
  }
  size_ = n;
}

void PackedRun::Encode(const EdgeEntry* entries, uint32_t n, SlabAllocator& slab) {
  char* old = block_;
  const uint32_t old_units = old == nullptr ? 0 : Units(size_, fields().width);
  block_ = nullptr;
  size_ = 0;
  width_ = 0;
  if (n > 0) {
    InternalId largest = 0;
    for (uint32_t i = 0; i < n; ++i)
      largest = std::max<InternalId>(largest, InternalId{entries[i].peer});
    const TimestampMs base = EntryTs(entries[0]);
    const auto span = static_cast<uint64_t>(EntryTs(entries[n - 1]) - base);
    const auto pb = static_cast<unsigned>(std::bit_width(largest));
    const auto tb = static_cast<unsigned>(std::bit_width(span));
    const uint32_t units = Units(n, pb + 1 + tb);
    block_ = static_cast<char*>(slab.AllocateBlock(units));
    std::memset(block_, 0, size_t{SlabAllocator::CapacityFor(units)} * sizeof(EdgeEntry));
    const uint64_t header =
        static_cast<uint64_t>(base) | (uint64_t{pb} << 42) | (uint64_t{tb} << 48);
    std::memcpy(block_, &header, sizeof(header));
    size_ = n;
    width_ = pb + 1 + tb;
    // Fields in order through a sink: Put's read-modify-writes would each wait on the store
    // before them (a bulk load and a restart encode every run this way).
    BitSink sink(block_ + 8, 0);
    for (uint32_t i = 0; i < n; ++i) {
      const EdgeEntry& e = entries[i];
      sink.Put(uint64_t{e.peer} | (uint64_t{EntryMutual(e)} << pb), pb + 1);
      sink.Put(static_cast<uint64_t>(EntryTs(e) - base), tb);
    }
    sink.Flush();
  }
  if (old != nullptr) slab.FreeBlock(old, old_units);
}

void PackedRun::Insert(const EdgeEntry& e, const EntryOrder& order, SlabAllocator& slab) {
  // Most inserts are the newest entry: check the back before searching.
  const EntryKey key = order.KeyOf(e);
  uint32_t pos = size_;
  if (size_ > 0) {
    const PackedFields f = fields();
    const TimestampMs last = f.Ts(size_ - 1);
    const bool after_last =
        last != key.ts ? last < key.ts : order.External(f.Peer(size_ - 1)) < key.user;
    if (!after_last) pos = static_cast<uint32_t>(Rank(key, order));
  }
  InsertAt(pos, e, slab);
}

void PackedRun::InsertAt(uint32_t pos, const EdgeEntry& e, SlabAllocator& slab) {
  if (size_ > 0) {
    const PackedFields f = fields();
    if (f.Fits(e)) {
      // The widths hold it: make room by moving the bits after pos up one entry.
      const uint32_t n = size_;
      ResizeSameWidths(f, n + 1, slab);
      const PackedFields g = fields();  // the block may have moved
      char* payload = block_ + 8;
      MoveBitsUp(payload, (uint64_t{pos} + 1) * g.width, uint64_t{pos} * g.width,
                 uint64_t{n - pos} * g.width);
      Put(g, pos, e);
      return;
    }
  }
  std::vector<EdgeEntry>& all = Scratch();
  all.resize(size_);
  Decode(all.data());
  all.insert(all.begin() + pos, e);
  Encode(all.data(), static_cast<uint32_t>(all.size()), slab);
}

void PackedRun::EraseAt(uint32_t pos, SlabAllocator& slab) {
  if (size_ == 1) {
    Clear(slab);
    return;
  }
  const PackedFields f = fields();
  MoveBitsDown(block_ + 8, uint64_t{pos} * f.width, (uint64_t{pos} + 1) * f.width,
               uint64_t{size_ - pos - 1} * f.width);
  ResizeSameWidths(f, size_ - 1, slab);
}

void PackedRun::AppendRun(const EdgeEntry* src, uint32_t n, SlabAllocator& slab) {
  if (n == 0) return;
  std::vector<EdgeEntry>& all = Scratch();
  all.resize(size_);
  Decode(all.data());
  all.insert(all.end(), src, src + n);
  Encode(all.data(), static_cast<uint32_t>(all.size()), slab);
}

void PackedRun::Truncate(uint32_t n, SlabAllocator& slab) {
  if (n == size_) return;
  if (n == 0) {
    Clear(slab);
    return;
  }
  ResizeSameWidths(fields(), n, slab);
}

void PackedRun::Clear(SlabAllocator& slab) {
  Encode(nullptr, 0, slab);
}

}  // namespace relgraph
