#include "engine/graph/following_list.h"

#include <algorithm>
#include <bit>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "engine/graph/id_map.h"  // EntryOrder reads external ids

namespace relgraph {
namespace {

#if defined(__x86_64__)
// 16 ids per iteration with AVX2; chosen at run time, so the binary still runs without AVX2.
__attribute__((target("avx2"))) size_t FindPeerAvx2(const uint32_t* p, size_t n, uint32_t peer) {
  const __m256i needle = _mm256_set1_epi32(static_cast<int>(peer));
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 8));
    const __m256i eq =
        _mm256_or_si256(_mm256_cmpeq_epi32(a, needle), _mm256_cmpeq_epi32(b, needle));
    if (!_mm256_testz_si256(eq, eq)) break;
  }
  for (; i < n; ++i) {
    if (p[i] == peer) return i;
  }
  return n;
}
const bool kHaveAvx2 = __builtin_cpu_supports("avx2");
#endif

}  // namespace

size_t FollowingList::FindPeer(InternalId peer) const {
  if (is_short_run()) return short_run().FindPeer(peer);
  const uint32_t* p = peers();
  const size_t n = size();
#if defined(__x86_64__)
  if (n >= 16 && kHaveAvx2) return FindPeerAvx2(p, n, peer);
#endif
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i needle = _mm_set1_epi32(static_cast<int>(peer));
  for (; i + 8 <= n; i += 8) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + 4));
    const __m128i eq = _mm_or_si128(_mm_cmpeq_epi32(a, needle), _mm_cmpeq_epi32(b, needle));
    if (_mm_movemask_epi8(eq) != 0) break;
  }
#endif
  for (; i < n; ++i) {
    if (p[i] == peer) return i;
  }
  return n;
}

size_t FollowingList::Rank(const EntryKey& k, const EntryOrder& order) const {
  if (is_packed()) {
    // The last group whose first entry sorts before k, by the anchors (the last group's
    // is its newest time: its first comes from decoding it); then within it.
    const GapGroups g = gaps();
    const uint32_t* const peer = peers();
    const auto less = [&](TimestampMs ts, InternalId p) {
      return ts != k.ts ? ts < k.ts : order.External(p) < k.user;
    };
    const uint32_t last = g.shape().groups() - 1;
    uint32_t lo = 0, hi = last;
    while (lo < hi) {
      const uint32_t mid = (lo + hi) / 2;
      if (less(g.Anchor(mid), peer[mid * GapShape::kGroup]))
        lo = mid + 1;
      else
        hi = mid;
    }
    TimestampMs ts[GapShape::kGroup];
    if (lo == last) {
      g.DecodeGroup(last, ts);
      if (less(ts[0], peer[last * GapShape::kGroup])) lo = last + 1;
    }
    if (lo == 0) return 0;
    const uint32_t grp = lo - 1;
    const uint32_t first = grp * GapShape::kGroup;
    const uint32_t count = g.GroupSize(grp);
    if (grp != last) g.DecodeGroup(grp, ts);
    uint32_t r = 1;
    while (r < count && less(ts[r], peer[first + r])) ++r;
    return first + r;
  }
  if (is_short_run()) {
    const ShortRun r = short_run();
    return RankBy(k, order, [&](size_t i) { return r.Ts(static_cast<uint32_t>(i)); });
  }
  return RankBy(k, order, [&](size_t i) { return TsAt(i); });
}

template <typename TsOf>
size_t FollowingList::RankBy(const EntryKey& k, const EntryOrder& order, TsOf&& ts_of) const {
  size_t lo = 0, hi = size();
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    const TimestampMs ts = ts_of(mid);
    const bool less = ts != k.ts ? ts < k.ts : order.External(PeerAt(mid)) < k.user;
    if (less)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

uint32_t FollowingList::PackedSlabSize(size_t bytes) {
  const size_t unit = InWordBlock(bytes) ? 4 : sizeof(EdgeEntry);
  return static_cast<uint32_t>((bytes + unit - 1) / unit);
}

size_t FollowingList::PackedBlockBytes(size_t bytes) {
  if (InWordBlock(bytes)) return SlabAllocator::WordBlockBytes(PackedSlabSize(bytes));
  return (size_t{SlabAllocator::CapacityFor(PackedSlabSize(bytes))} * sizeof(EdgeEntry) + 3) &
         ~size_t{3};
}

char* FollowingList::AllocatePacked(size_t bytes, SlabAllocator& slab) {
  const uint32_t size = PackedSlabSize(bytes);
  return static_cast<char*>(InWordBlock(bytes) ? slab.AllocateWords(size)
                                               : slab.AllocateBlock(size));
}

void FollowingList::FreePacked(char* block, size_t bytes, SlabAllocator& slab) {
  if (InWordBlock(bytes)) {
    slab.FreeWords(block, PackedSlabSize(bytes));
  } else {
    slab.FreeBlock(block, PackedSlabSize(bytes));
  }
}

size_t FollowingList::BlockBytes() const {
  const uint32_t n = size();
  if (n == 0) return 0;
  if (is_short_run()) return SlabAllocator::WordBlockBytes(short_run().words());
  if (is_packed()) return PackedBlockBytes(ContentBytes());
  return (size_t{SlabAllocator::CapacityFor(1)} * sizeof(EdgeEntry) + 3) & ~size_t{3};
}

void FollowingList::FreeBlock(SlabAllocator& slab) {
  const uint32_t n = size();
  if (is_short_run()) {
    FreeShortRun(block(), n, slab);
  } else if (is_packed()) {
    FreePacked(block(), ContentBytes(), slab);
  } else if (n > 0) {
    slab.FreeBlock(block(), 1);
  }
  word_ = 0;
}

void FollowingList::PutPlain(const EdgeEntry& e, SlabAllocator& slab) {
  char* b = reinterpret_cast<char*>(slab.Allocate(1));
  Set(b, 1);
  *peers() = e.peer;
  *ts_lo() = e.ts_lo;
  *ts_hi() = e.ts_hi_flags;
}

void FollowingList::Decode(EdgeEntry* out) const {
  const uint32_t n = size();
  if (is_short_run()) {
    short_run().Decode(out);
    return;
  }
  if (!is_packed()) {
    for (uint32_t i = 0; i < n; ++i) out[i] = EntryAt(i);
    return;
  }
  uint32_t i = 0;
  ForEach([&](const EdgeEntry& e) { out[i++] = e; });
}

void FollowingList::PutHeader(char* block, const GapShape& shape) {
  const uint64_t header = static_cast<uint64_t>(shape.base) | (uint64_t{shape.time_bits} << 42) |
                          (uint64_t{shape.end_bits} << 48);  // no spare slots
  std::memcpy(block, &header, sizeof(header));
}

void FollowingList::Encode(const EdgeEntry* entries, uint32_t n, SlabAllocator& slab) {
  FreeBlock(slab);
  if (n < kShortRunMin) {
    if (n == 1) PutPlain(entries[0], slab);
    return;
  }
  if (n < kPackMin) {
    Set(AllocateShortRun(entries, n, slab), n);
    return;
  }
  uint64_t stream_bits = 0;
  const GapShape shape = GapGroups::ShapeFor(entries, n, &stream_bits);
  char* b = AllocatePacked(PackedBytes(n, shape.stream_start() + stream_bits), slab);
  PutHeader(b, shape);
  Set(b, n);
  uint32_t* const peer = peers();
  for (uint32_t i = 0; i < n; ++i) peer[i] = entries[i].peer;
  GapGroups::Write(b + 8 + 4 * size_t{n}, shape, entries);
}

bool FollowingList::AppendPacked(const EdgeEntry& e, const GapGroups& g, TimestampMs last_ts,
                                 SlabAllocator& slab) {
  const TimestampMs ts = EntryTs(e);
  if (!g.CanAppend(ts, last_ts)) return false;
  const uint32_t n = size();
  const uint32_t spare = spare_slots();
  const uint64_t area_bits = g.AreaBits();
  const uint64_t new_area_bits = g.AppendedAreaBits(ts, last_ts);
  const size_t old_bytes = PackedBytes(n + spare, area_bits);
  const uint32_t peer = e.peer;
  char* b = block();
  if (spare > 0 && SamePackedBlock(old_bytes, PackedBytes(n + spare, new_area_bits))) {
    // The common case: a spare slot takes the peer, nothing moves.
    std::memcpy(b + 8 + 4 * size_t{n}, &peer, sizeof(peer));
    PutSpare(b, spare - 1);
    GapGroups(g.area(), g.shape()).Append(ts, last_ts, EntryMutual(e));
    Set(b, n + 1);
    return true;
  }
  // The area moves up (in this block or the next class's), leaving half the block's slack
  // as spare slots.
  const size_t least = PackedBytes(n + 1, new_area_bits);
  char* dst = SamePackedBlock(old_bytes, least) ? b : AllocatePacked(least, slab);
  const auto fresh_spare =
      static_cast<uint32_t>(std::min<size_t>(kMaxSpare, (PackedBlockBytes(least) - least) / 8));
  const size_t area_at = 8 + 4 * (size_t{n} + 1 + fresh_spare);
  const auto area_bytes = static_cast<size_t>((area_bits + 7) / 8);
  if (dst == b) {
    std::memmove(b + area_at, g.area(), area_bytes);
  } else {
    std::memcpy(dst, b, 8 + 4 * size_t{n});
    std::memcpy(dst + area_at, g.area(), area_bytes);
    FreePacked(b, old_bytes, slab);
  }
  std::memcpy(dst + 8 + 4 * size_t{n}, &peer, sizeof(peer));
  PutSpare(dst, fresh_spare);
  GapGroups(dst + area_at, g.shape()).Append(ts, last_ts, EntryMutual(e));
  Set(dst, n + 1);
  return true;
}

// The entries of a list being rebuilt: one per thread, so the rare re-encode does not
// allocate.
static std::vector<EdgeEntry>& Scratch() {
  thread_local std::vector<EdgeEntry> scratch;
  return scratch;
}

void FollowingList::Insert(const EdgeEntry& e, const EntryOrder& order, SlabAllocator& slab) {
  const EntryKey key = order.KeyOf(e);
  const uint32_t n = size();
  if (n == 0) {
    PutPlain(e, slab);
    return;
  }
  // Most inserts are the newest entry: check the back before searching.
  const bool packed = n >= kPackMin;
  const TimestampMs last = packed ? gaps().LastTs() : TsAt(n - 1);
  const bool after_last = last != key.ts ? last < key.ts : order.External(PeerAt(n - 1)) < key.user;
  const size_t pos = after_last ? n : Rank(key, order);
  if (n + 1 < kPackMin) {
    // A short list: the newest entry appends at the run's widths when they hold it; any
    // other insert encodes the list again.
    if (pos == n && is_short_run()) {
      if (char* b = AppendToShortRun(block(), n, e, slab)) {
        Set(b, n + 1);
        return;
      }
    }
    EdgeEntry all[kPackMin];
    Decode(all);
    std::copy_backward(all + pos, all + n, all + n + 1);
    all[pos] = e;
    Encode(all, n + 1, slab);
    return;
  }
  if (packed && pos == n && AppendPacked(e, gaps(), last, slab)) return;
  // The first packed form, an insert before the newest, widths or a block that do not hold
  // it: encode the list again.
  std::vector<EdgeEntry>& all = Scratch();
  all.resize(n);
  Decode(all.data());
  all.insert(all.begin() + static_cast<ptrdiff_t>(pos), e);
  Encode(all.data(), n + 1, slab);
}

void FollowingList::AppendRun(const EdgeEntry* entries, uint32_t n, SlabAllocator& slab) {
  if (n == 0) return;
  const uint32_t old_size = size();
  if (old_size == 0) {
    Encode(entries, n, slab);
    return;
  }
  std::vector<EdgeEntry>& all = Scratch();
  all.resize(old_size);
  Decode(all.data());
  all.insert(all.end(), entries, entries + n);
  Encode(all.data(), old_size + n, slab);
}

bool FollowingList::ErasePackedInPlace(uint32_t pos) {
  const uint32_t n = size();
  const uint32_t spare = spare_slots();
  const GapGroups g = gaps();
  const GapErase plan = g.PlanErase(pos);
  const uint64_t area_bits = g.AreaBits();
  // The freed peer slot becomes spare; past kMaxSpare the area moves down over it.
  const uint32_t slots = n + spare - (spare == kMaxSpare ? 1 : 0);
  if (!SamePackedBlock(PackedBytes(n + spare, area_bits),
                       PackedBytes(slots, g.ErasedAreaBits(plan)))) {
    return false;
  }
  char* const b = block();
  std::memmove(b + 8 + 4 * size_t{pos}, b + 8 + 4 * size_t{pos} + 4, 4 * size_t{n - 1 - pos});
  char* area = g.area();
  if (spare == kMaxSpare) {
    std::memmove(area - 4, area, static_cast<size_t>((area_bits + 7) / 8));
    area -= 4;
  } else {
    PutSpare(b, spare + 1);
  }
  GapGroups moved(area, g.shape());
  moved.Erase(plan);
  Set(b, n - 1);
  return true;
}

void FollowingList::EraseAt(size_t pos, SlabAllocator& slab) {
  const uint32_t n = size();
  if (n <= kPackMin) {
    // A short list, or one too short to keep packed: encode what is left.
    EdgeEntry all[kPackMin];
    Decode(all);
    std::copy(all + pos + 1, all + n, all + pos);
    Encode(all, n - 1, slab);
    return;
  }
  if (ErasePackedInPlace(static_cast<uint32_t>(pos))) return;
  // The groups, the widths or the block change: encode the list again.
  std::vector<EdgeEntry>& all = Scratch();
  all.resize(n);
  Decode(all.data());
  all.erase(all.begin() + static_cast<ptrdiff_t>(pos));
  Encode(all.data(), n - 1, slab);
}

void FollowingList::Clear(SlabAllocator& slab) {
  FreeBlock(slab);
}

uint32_t FollowingList::CopyDescending(size_t end, uint32_t limit, EdgeEntry* out) const {
  const uint32_t n = static_cast<uint32_t>(std::min<size_t>(end, limit));
  if (is_short_run()) {
    const ShortRun r = short_run();
    for (uint32_t i = 0; i < n; ++i) out[i] = r.At(static_cast<uint32_t>(end - 1 - i));
    return n;
  }
  if (!is_packed()) {
    for (uint32_t i = 0; i < n; ++i) out[i] = EntryAt(end - 1 - i);
    return n;
  }
  const GapGroups g = gaps();
  const uint32_t* const peer = peers();
  TimestampMs ts[GapShape::kGroup];
  uint32_t done = 0;
  for (auto at = static_cast<uint32_t>(end); done < n;) {
    const uint32_t grp = (at - 1) / GapShape::kGroup;
    const uint32_t first = grp * GapShape::kGroup;
    g.DecodeGroup(grp, ts);
    const uint32_t mask = g.MutualMask(grp);
    for (uint32_t r = at - first; r-- > 0 && done < n;)
      out[done++] = MakeEntry(peer[first + r], ts[r], ((mask >> r) & 1) != 0);
    at = first;
  }
  return n;
}

}  // namespace relgraph
