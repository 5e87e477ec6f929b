#include "engine/graph/fan_list.h"

#include <algorithm>

#include "engine/graph/id_map.h"  // EntryOrder reads external ids

namespace relgraph {

// ---- FanList: dispatch between the plain, short-run, packed and chunked forms -------------

void FanList::PutShort(const EdgeEntry* entries, uint32_t n, SlabAllocator& slab) {
  if (n == 0) {
    word_ = 0;
    return;
  }
  if (n >= kPackMin) {
    PackedRun r;
    r.AppendRun(entries, n, slab);
    PutPacked(r);
    return;
  }
  if (n >= kShortRunMin) {
    PutShortBlock(AllocateShortRun(entries, n, slab), n, 0);
    return;
  }
  EntryArray a;
  a.AppendRun(entries, n, slab);
  PutSmall(a);
}

void FanList::ClearSmall(SlabAllocator& slab) {
  const uint32_t n = short_size();
  if (n >= kShortRunMin) {
    FreeShortRun(block(), n, slab);
    word_ = 0;
    return;
  }
  EntryArray a = TakeSmall();
  a.Clear(slab);
  word_ = 0;
}

std::vector<EdgeEntry> FanList::DecodeShort() const {
  const uint32_t n = short_size();
  std::vector<EdgeEntry> all(n);
  if (n >= kPackMin) {
    packed_view().Decode(all.data());
  } else {
    DecodeSmall(all.data());
  }
  return all;
}

void FanList::Insert(const EdgeEntry& e, const FanContext& ctx) {
  if (!chunked()) {
    const uint32_t n = short_size();
    if (n >= ctx.chunk_entries) {
      // A full short list becomes the first chunk of a chunked one.
      const std::vector<EdgeEntry> all = DecodeShort();
      Clear(ctx.slab);
      PutChunks(new FanChunks(all, ctx));
    } else if (n >= kPackMin) {
      PackedRun r = packed_view();
      r.Insert(e, ctx.order, ctx.slab);
      PutPacked(r);
      return;
    } else {
      // Below kPackMin: encode the list again with the entry in its place (most inserts
      // are the newest entry: the back is checked before searching).
      const EntryKey key = ctx.order.KeyOf(e);
      if (n >= kShortRunMin && n + 1 < kPackMin &&
          ctx.order.Less(ShortRun(block(), n).At(n - 1), key)) {
        if (char* b = AppendToShortRun(block(), n, e, ctx.slab)) {
          PutShortBlock(b, n + 1, 0);
          return;
        }
      }
      EdgeEntry all[kPackMin];
      DecodeSmall(all);
      const size_t pos =
          n == 0 || ctx.order.Less(all[n - 1], key) ? n : ctx.order.LowerBound(all, n, key);
      std::copy_backward(all + pos, all + n, all + n + 1);
      all[pos] = e;
      ClearSmall(ctx.slab);
      PutShort(all, n + 1, ctx.slab);
      return;
    }
  }
  FanChunks* c = chunks();
  c->Insert(e, ctx);
  PutChunks(c);
}

void FanList::BuildFromSorted(const EdgeEntry* entries, uint32_t n, const FanContext& ctx) {
  if (n <= ctx.chunk_entries) {
    PutShort(entries, n, ctx.slab);
    return;
  }
  PutChunks(FanChunks::FromSorted(entries, n, ctx));
}

bool FanList::Erase(const EntryKey& k, const FanContext& ctx) {
  if (!chunked()) {
    const uint32_t n = short_size();
    if (n >= kPackMin) {
      PackedRun r = packed_view();
      const size_t i = r.Find(k, ctx.order);
      if (i == n) {
        PutPacked(r);
        return false;
      }
      if (n - 1 >= kPackMin) {
        r.EraseAt(static_cast<uint32_t>(i), ctx.slab);
        PutPacked(r);
        return true;
      }
      // Too short to keep packed: back to a short run.
      std::vector<EdgeEntry> all(n);
      r.Decode(all.data());
      r.Clear(ctx.slab);
      all.erase(all.begin() + static_cast<ptrdiff_t>(i));
      word_ = 0;
      PutShort(all.data(), n - 1, ctx.slab);
      return true;
    }
    EdgeEntry all[kPackMin];
    DecodeSmall(all);
    const size_t i = ctx.order.Find(all, n, k);
    if (i == n) return false;
    std::copy(all + i + 1, all + n, all + i);
    ClearSmall(ctx.slab);
    PutShort(all, n - 1, ctx.slab);
    return true;
  }
  FanChunks* c = chunks();
  if (!c->Erase(k, ctx)) return false;
  if (c->size() <= ctx.chunk_entries / 4) {
    const std::vector<EdgeEntry> all = c->Flatten(ctx.slab);
    delete c;
    word_ = 0;
    PutShort(all.data(), static_cast<uint32_t>(all.size()), ctx.slab);
  } else {
    PutChunks(c);
  }
  return true;
}

std::optional<EdgeEntry> FanList::Get(const EntryKey& k, const EntryOrder& order) const {
  if (chunked()) return chunks()->Get(k, order);
  const uint32_t n = short_size();
  if (n >= kPackMin) {
    const PackedRun r = packed_view();
    const size_t i = r.Find(k, order);
    return i < n ? std::optional<EdgeEntry>(r.At(static_cast<uint32_t>(i))) : std::nullopt;
  }
  EdgeEntry all[kPackMin];
  DecodeSmall(all);
  const size_t i = order.Find(all, n, k);
  return i < n ? std::optional<EdgeEntry>(all[i]) : std::nullopt;
}

bool FanList::SetMutual(const EntryKey& k, bool mutual, const EntryOrder& order) {
  if (chunked()) return chunks()->SetMutual(k, mutual, order);
  const uint32_t n = short_size();
  if (n >= kPackMin) {
    PackedRun r = packed_view();
    const size_t i = r.Find(k, order);
    if (i == n) return false;
    r.SetMutual(static_cast<uint32_t>(i), mutual);
    return true;
  }
  EdgeEntry all[kPackMin];
  DecodeSmall(all);
  const size_t i = order.Find(all, n, k);
  if (i == n) return false;
  if (n >= kShortRunMin) {
    ShortRun(block(), n).SetMutual(block(), static_cast<uint32_t>(i), mutual);
  } else {
    SetEntryMutual(*const_cast<EdgeEntry*>(small_data()), mutual);
  }
  return true;
}

size_t FanList::Rank(const EntryKey& k, const EntryOrder& order) const {
  if (chunked()) return chunks()->Rank(k, order);
  if (short_size() >= kPackMin) return packed_view().Rank(k, order);
  EdgeEntry all[kPackMin];
  return order.LowerBound(all, DecodeSmall(all), k);
}

uint32_t FanList::CopyDescending(size_t end, uint32_t limit, EdgeEntry* out) const {
  if (chunked()) return chunks()->CopyDescending(end, limit, out);
  if (short_size() >= kPackMin) return packed_view().CopyDescending(end, limit, out);
  EdgeEntry all[kPackMin];
  DecodeSmall(all);
  return CopyRunDescending(all, end, limit, out);
}

void FanList::Clear(SlabAllocator& slab) {
  if (chunked()) {
    chunks()->Clear(slab);
    delete chunks();
  } else if (short_size() >= kPackMin) {
    PackedRun r = packed_view();
    r.Clear(slab);
  } else {
    ClearSmall(slab);
  }
  word_ = 0;
}

size_t FanList::ChunkedMemoryBytes() const {
  return chunks()->MemoryBytes();
}

// ---- FanChunks ------------------------------------------------------------------------------

FanChunks::FanChunks(const std::vector<EdgeEntry>& first, const FanContext& ctx) {
  chunks_.emplace_back().AppendRun(first.data(), static_cast<uint32_t>(first.size()), ctx.slab);
  first_.push_back(ctx.order.KeyOf(first.front()));
  RebuildSizes();
}

FanChunks* FanChunks::FromSorted(const EdgeEntry* entries, uint32_t n, const FanContext& ctx) {
  auto* c = new FanChunks();
  for (uint32_t at = 0; at < n; at += ctx.chunk_entries) {
    c->chunks_.emplace_back().AppendRun(entries + at, std::min(ctx.chunk_entries, n - at),
                                        ctx.slab);
    c->first_.push_back(ctx.order.KeyOf(entries[at]));
  }
  c->RebuildSizes();
  return c;
}

size_t FanChunks::Locate(const EntryKey& k) const {
  // The last chunk whose first key is <= k; keys before every chunk route to chunk 0.
  const auto it = std::upper_bound(first_.begin(), first_.end(), k);
  return it == first_.begin() ? 0 : static_cast<size_t>(it - first_.begin()) - 1;
}

void FanChunks::Insert(const EdgeEntry& e, const FanContext& ctx) {
  const EntryKey k = ctx.order.KeyOf(e);
  size_t c = Locate(k);
  if (chunks_[c].size() >= ctx.chunk_entries) {
    const PackedRun& full = chunks_[c];
    const bool newest = c + 1 == chunks_.size() && ctx.order.Less(full.At(full.size() - 1), k);
    if (newest) {
      // Appending past the newest entry: start a fresh chunk and leave this one full.
      chunks_.emplace_back().InsertAt(0, e, ctx.slab);
      first_.push_back(k);
      RebuildSizes();
      return;
    }
    Split(c, ctx);
    c = Locate(k);
  }
  chunks_[c].Insert(e, ctx.order, ctx.slab);
  ++total_;
  if (k < first_[c]) first_[c] = k;
  FenwickAdd(c, +1);
}

bool FanChunks::Erase(const EntryKey& k, const FanContext& ctx) {
  const size_t c = Locate(k);
  PackedRun& chunk = chunks_[c];
  const size_t i = chunk.Find(k, ctx.order);
  if (i == chunk.size()) return false;
  chunk.EraseAt(static_cast<uint32_t>(i), ctx.slab);
  --total_;
  if (chunk.empty()) {
    RemoveChunk(c, ctx.slab);
    RebuildSizes();
    return true;
  }
  if (i == 0) first_[c] = ctx.order.KeyOf(chunk.At(0));
  FenwickAdd(c, -1);
  MaybeMerge(c, ctx);
  return true;
}

std::optional<EdgeEntry> FanChunks::Get(const EntryKey& k, const EntryOrder& order) const {
  const PackedRun& chunk = chunks_[Locate(k)];
  const size_t i = chunk.Find(k, order);
  if (i == chunk.size()) return std::nullopt;
  return chunk.At(static_cast<uint32_t>(i));
}

bool FanChunks::SetMutual(const EntryKey& k, bool mutual, const EntryOrder& order) {
  PackedRun& chunk = chunks_[Locate(k)];
  const size_t i = chunk.Find(k, order);
  if (i == chunk.size()) return false;
  chunk.SetMutual(static_cast<uint32_t>(i), mutual);
  return true;
}

size_t FanChunks::Rank(const EntryKey& k, const EntryOrder& order) const {
  const size_t c = Locate(k);
  return Prefix(c) + chunks_[c].Rank(k, order);
}

uint32_t FanChunks::CopyDescending(size_t end, uint32_t limit, EdgeEntry* out) const {
  uint32_t n = 0;
  if (end == 0 || limit == 0) return 0;
  size_t offset = 0;
  size_t c = ChunkOfRank(end - 1, &offset);
  size_t chunk_end = offset + 1;  // entries [0, chunk_end) of chunk c come next, newest first
  while (n < limit) {
    n += chunks_[c].CopyDescending(chunk_end, limit - n, out + n);
    if (c == 0) break;
    --c;
    chunk_end = chunks_[c].size();
  }
  return n;
}

std::vector<EdgeEntry> FanChunks::Flatten(SlabAllocator& slab) {
  std::vector<EdgeEntry> all(total_);
  size_t at = 0;
  for (PackedRun& c : chunks_) {
    c.Decode(all.data() + at);
    at += c.size();
    c.Clear(slab);
  }
  chunks_.clear();
  total_ = 0;
  return all;
}

void FanChunks::Clear(SlabAllocator& slab) {
  for (PackedRun& c : chunks_) c.Clear(slab);
  chunks_.clear();
  first_.clear();
  fenwick_.clear();
  total_ = 0;
}

size_t FanChunks::MemoryBytes() const {
  return sizeof(*this) + chunks_.capacity() * sizeof(PackedRun) +
         first_.capacity() * sizeof(EntryKey) + fenwick_.capacity() * sizeof(uint32_t);
}

// ---- structure maintenance --------------------------------------------------------------------

void FanChunks::Split(size_t c, const FanContext& ctx) {
  PackedRun& full = chunks_[c];
  const uint32_t keep = full.size() / 2;
  std::vector<EdgeEntry> all(full.size());
  full.Decode(all.data());
  PackedRun upper;
  upper.AppendRun(all.data() + keep, full.size() - keep, ctx.slab);
  full.Truncate(keep, ctx.slab);
  chunks_.insert(chunks_.begin() + static_cast<ptrdiff_t>(c) + 1, upper);
  first_.insert(first_.begin() + static_cast<ptrdiff_t>(c) + 1, ctx.order.KeyOf(all[keep]));
  RebuildSizes();
}

void FanChunks::MaybeMerge(size_t c, const FanContext& ctx) {
  const uint32_t small = ctx.chunk_entries / 4;
  if (chunks_[c].size() > small) return;
  // Merge with the smaller neighbour when the pair fits comfortably in one chunk.
  const bool has_right = c + 1 < chunks_.size();
  const bool has_left = c > 0;
  size_t left;
  if (has_right && (!has_left || chunks_[c + 1].size() <= chunks_[c - 1].size())) {
    left = c;
  } else if (has_left) {
    left = c - 1;
  } else {
    return;
  }
  PackedRun& a = chunks_[left];
  PackedRun& b = chunks_[left + 1];
  if (a.size() + b.size() > ctx.chunk_entries * 3 / 4) return;
  std::vector<EdgeEntry> moved(b.size());
  b.Decode(moved.data());
  a.AppendRun(moved.data(), b.size(), ctx.slab);
  RemoveChunk(left + 1, ctx.slab);  // `a` keeps its first key
  RebuildSizes();
}

void FanChunks::RemoveChunk(size_t c, SlabAllocator& slab) {
  chunks_[c].Clear(slab);
  chunks_.erase(chunks_.begin() + static_cast<ptrdiff_t>(c));
  first_.erase(first_.begin() + static_cast<ptrdiff_t>(c));
}

void FanChunks::RebuildSizes() {
  fenwick_.assign(chunks_.size() + 1, 0);
  total_ = 0;
  for (size_t c = 0; c < chunks_.size(); ++c) {
    total_ += chunks_[c].size();
    // O(m) Fenwick build: add own size, then push the partial sum to the parent.
    fenwick_[c + 1] += chunks_[c].size();
    const size_t parent = (c + 1) + ((c + 1) & (~(c + 1) + 1));
    if (parent <= chunks_.size()) fenwick_[parent] += fenwick_[c + 1];
  }
}

void FanChunks::FenwickAdd(size_t c, int delta) {
  for (size_t i = c + 1; i < fenwick_.size(); i += i & (~i + 1)) {
    fenwick_[i] = static_cast<uint32_t>(static_cast<int64_t>(fenwick_[i]) + delta);
  }
}

size_t FanChunks::Prefix(size_t c) const {
  size_t sum = 0;
  for (size_t i = c; i > 0; i -= i & (~i + 1)) sum += fenwick_[i];
  return sum;
}

size_t FanChunks::ChunkOfRank(size_t rank, size_t* offset) const {
  // Descend the Fenwick tree: the largest prefix of whole chunks that stays <= rank.
  size_t pos = 0;
  size_t step = 1;
  while (step * 2 < fenwick_.size()) step *= 2;
  size_t remaining = rank;
  for (; step > 0; step /= 2) {
    if (pos + step < fenwick_.size() && fenwick_[pos + step] <= remaining) {
      pos += step;
      remaining -= fenwick_[pos];
    }
  }
  *offset = remaining;
  return pos;  // chunks [0, pos) hold `rank - remaining` entries; chunk pos holds the rank
}

}  // namespace relgraph
