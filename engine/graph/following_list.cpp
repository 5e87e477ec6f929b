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
    const Packed p = packed();  // the header once, not at every probe
    return RankBy(k, order, [&](size_t i) { return p.Ts(i); });
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

uint32_t FollowingList::PackedCapacity(uint32_t n, unsigned time_bits) {
  const uint64_t bytes =
      uint64_t{SlabAllocator::CapacityFor(PackedUnits(n, time_bits))} * sizeof(EdgeEntry) - 8;
  const unsigned w = 1 + time_bits;
  // 4p + ceil(p * w / 8) <= bytes exactly when p * (32 + w) <= 8 * bytes (bytes is whole).
  return static_cast<uint32_t>(bytes * 8 / (32 + w));
}

size_t FollowingList::BlockBytes() const {
  const uint32_t n = size();
  if (n == 0) return 0;
  if (is_short_run()) return SlabAllocator::WordBlockBytes(short_run().words());
  const uint32_t units = is_packed() ? PackedUnits(n, packed().time_bits) : 1;
  return (size_t{SlabAllocator::CapacityFor(units)} * sizeof(EdgeEntry) + 3) & ~size_t{3};
}

void FollowingList::FreeBlock(SlabAllocator& slab) {
  const uint32_t n = size();
  if (is_short_run()) {
    FreeShortRun(block(), n, slab);
  } else if (n > 0) {
    slab.FreeBlock(block(), is_packed() ? PackedUnits(n, packed().time_bits) : 1);
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

EdgeEntry FollowingList::Packed::Entry(const uint32_t* peers, uint32_t i) const {
  const uint64_t field = LoadBits(times, uint64_t{i} * width, width);
  return MakeEntry(peers[i], base + static_cast<TimestampMs>(field >> 1), (field & 1) != 0);
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
  const Packed p = packed();  // the header once, not per entry
  for (uint32_t i = 0; i < n; ++i) out[i] = p.Entry(peers(), i);
}

void FollowingList::PutHeader(char* block, TimestampMs base, unsigned time_bits,
                              uint32_t capacity) {
  const uint64_t header = static_cast<uint64_t>(base) | (uint64_t{time_bits} << 42) |
                          (uint64_t{std::min(capacity, kCapacitySaturated)} << 48);
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
  const TimestampMs base = EntryTs(entries[0]);
  const auto time_bits =
      static_cast<unsigned>(std::bit_width(static_cast<uint64_t>(EntryTs(entries[n - 1]) - base)));
  const uint32_t units = PackedUnits(n, time_bits);
  const uint32_t capacity = PackedCapacity(n, time_bits);
  char* b = static_cast<char*>(slab.AllocateBlock(units));
  PutHeader(b, base, time_bits, capacity);
  Set(b, n);
  const Packed p = packed();
  std::memset(p.times, 0, (uint64_t{capacity} * p.width + 7) / 8);
  uint32_t* const peer = peers();
  for (uint32_t i = 0; i < n; ++i) {
    peer[i] = entries[i].peer;
    const uint64_t field = (static_cast<uint64_t>(EntryTs(entries[i]) - base) << 1) |
                           (EntryMutual(entries[i]) ? 1 : 0);
    StoreBits(p.times, uint64_t{i} * p.width, p.width, field);
  }
}

void FollowingList::RelayoutPacked(const Packed& p, uint32_t n, SlabAllocator& slab) {
  const uint32_t old_size = size();
  const uint32_t old_units = PackedUnits(old_size, p.time_bits);
  const uint32_t new_units = PackedUnits(n, p.time_bits);
  if (SlabAllocator::CapacityFor(old_units) == SlabAllocator::CapacityFor(new_units)) {
    Set(block(), n);
    return;
  }
  const uint32_t capacity = PackedCapacity(n, p.time_bits);
  char* fresh = static_cast<char*>(slab.AllocateBlock(new_units));
  PutHeader(fresh, p.base, p.time_bits, capacity);
  const uint32_t keep = std::min(old_size, n);
  std::memcpy(fresh + 8, block() + 8, 4 * size_t{keep});
  char* times = fresh + 8 + 4 * size_t{capacity};
  const uint64_t keep_bytes = (uint64_t{keep} * p.width + 7) / 8;
  std::memcpy(times, p.times, keep_bytes);
  std::memset(times + keep_bytes, 0, (uint64_t{capacity} * p.width + 7) / 8 - keep_bytes);
  slab.FreeBlock(block(), old_units);
  Set(fresh, n);
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
  // Most inserts are the newest entry: check the back before searching.
  size_t pos = n;
  if (n > 0) {
    const TimestampMs last = n >= kPackMin ? packed().Ts(n - 1) : TsAt(n - 1);
    const bool after_last =
        last != key.ts ? last < key.ts : order.External(PeerAt(n - 1)) < key.user;
    if (!after_last) pos = Rank(key, order);
  }
  const size_t tail = n - pos;
  if (n == 0) {
    PutPlain(e, slab);
    return;
  }
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
  if (n >= kPackMin) {
    const Packed p = packed();
    const TimestampMs ts = EntryTs(e);
    if (ts >= p.base && (static_cast<uint64_t>(ts - p.base) >> p.time_bits) == 0) {
      // The width holds it: make room in place (in a larger block when this one is full).
      if (n + 1 > p.capacity) RelayoutPacked(p, n + 1, slab);
      Set(block(), n + 1);
      const Packed q = packed();
      uint32_t* const peer = peers();
      std::memmove(peer + pos + 1, peer + pos, 4 * tail);
      peer[pos] = e.peer;
      MoveBitsUp(q.times, (uint64_t{pos} + 1) * q.width, uint64_t{pos} * q.width,
                 uint64_t{tail} * q.width);
      StoreBits(q.times, uint64_t{pos} * q.width, q.width,
                (static_cast<uint64_t>(ts - q.base) << 1) | (EntryMutual(e) ? 1 : 0));
      return;
    }
  }
  // The first packed form, or a time the width does not hold: encode the list again.
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

void FollowingList::EraseAt(size_t pos, SlabAllocator& slab) {
  const uint32_t n = size();
  const size_t tail = n - pos - 1;
  if (n <= kPackMin) {
    // A short list, or one too short to keep packed: encode what is left.
    EdgeEntry all[kPackMin];
    Decode(all);
    std::copy(all + pos + 1, all + n, all + pos);
    Encode(all, n - 1, slab);
    return;
  }
  const Packed p = packed();
  uint32_t* const peer = peers();
  std::memmove(peer + pos, peer + pos + 1, 4 * tail);
  MoveBitsDown(p.times, uint64_t{pos} * p.width, (uint64_t{pos} + 1) * p.width,
               uint64_t{tail} * p.width);
  RelayoutPacked(p, n - 1, slab);
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
  const Packed p = packed();
  const uint32_t* const peer = peers();
  for (uint32_t i = 0; i < n; ++i) out[i] = p.Entry(peer, static_cast<uint32_t>(end - 1 - i));
  return n;
}

}  // namespace relgraph
