#include "engine/graph/following_list.h"

#include <algorithm>

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
  size_t lo = 0, hi = size();
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    const TimestampMs ts = TsAt(mid);
    const bool less = ts != k.ts ? ts < k.ts : order.External(PeerAt(mid)) < k.user;
    if (less)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

void FollowingList::Resize(uint32_t new_size, SlabAllocator& slab) {
  const uint32_t old_size = size();
  const uint32_t old_cap = capacity();
  const uint32_t new_cap = new_size == 0 ? 0 : SlabAllocator::CapacityFor(new_size);
  char* block = this->block();
  if (old_cap != new_cap) {
    char* fresh = new_size == 0 ? nullptr : reinterpret_cast<char*>(slab.Allocate(new_size));
    if (block != nullptr) {
      if (fresh != nullptr) {
        const size_t keep = std::min(old_size, new_size);
        std::memcpy(fresh, block, 4 * keep);
        std::memcpy(fresh + 4 * size_t{new_cap}, block + 4 * size_t{old_cap}, 4 * keep);
        std::memcpy(fresh + 8 * size_t{new_cap}, block + 8 * size_t{old_cap}, 2 * keep);
      }
      slab.Free(reinterpret_cast<EdgeEntry*>(block), old_size);
    }
    block = fresh;
  }
  Set(block, new_size);
}

void FollowingList::Insert(const EdgeEntry& e, const EntryOrder& order, SlabAllocator& slab) {
  const EntryKey key = order.KeyOf(e);
  const uint32_t n = size();
  // Most inserts are the newest entry: check the back before searching.
  size_t pos = n;
  if (n > 0) {
    const TimestampMs last = TsAt(n - 1);
    const bool after_last =
        last != key.ts ? last < key.ts : order.External(PeerAt(n - 1)) < key.user;
    if (!after_last) pos = Rank(key, order);
  }
  const size_t tail = n - pos;
  Resize(n + 1, slab);
  std::memmove(peers() + pos + 1, peers() + pos, 4 * tail);
  std::memmove(ts_lo() + pos + 1, ts_lo() + pos, 4 * tail);
  std::memmove(ts_hi() + pos + 1, ts_hi() + pos, 2 * tail);
  peers()[pos] = e.peer;
  ts_lo()[pos] = e.ts_lo;
  ts_hi()[pos] = e.ts_hi_flags;
}

void FollowingList::AppendRun(const EdgeEntry* entries, uint32_t n, SlabAllocator& slab) {
  const uint32_t old_size = size();
  Resize(old_size + n, slab);
  // The arrays' starts, once: stores through them may alias word_, so the compiler would
  // otherwise work the address and capacity out again for every entry.
  uint32_t* const peer = peers() + old_size;
  uint32_t* const lo = ts_lo() + old_size;
  uint16_t* const hi = ts_hi() + old_size;
  for (uint32_t i = 0; i < n; ++i) {
    peer[i] = entries[i].peer;
    lo[i] = entries[i].ts_lo;
    hi[i] = entries[i].ts_hi_flags;
  }
}

void FollowingList::EraseAt(size_t pos, SlabAllocator& slab) {
  const uint32_t n = size();
  const size_t tail = n - pos - 1;
  std::memmove(peers() + pos, peers() + pos + 1, 4 * tail);
  std::memmove(ts_lo() + pos, ts_lo() + pos + 1, 4 * tail);
  std::memmove(ts_hi() + pos, ts_hi() + pos + 1, 2 * tail);
  Resize(n - 1, slab);
}

void FollowingList::Clear(SlabAllocator& slab) {
  Resize(0, slab);
}

uint32_t FollowingList::CopyDescending(size_t end, uint32_t limit, EdgeEntry* out) const {
  const uint32_t n = static_cast<uint32_t>(std::min<size_t>(end, limit));
  for (uint32_t i = 0; i < n; ++i) out[i] = EntryAt(end - 1 - i);
  return n;
}

}  // namespace relgraph
