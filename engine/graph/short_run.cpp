#include "engine/graph/short_run.h"

#include <bit>
#include <iterator>

#include "engine/graph/packed_bits.h"

namespace relgraph {
namespace {

struct Widths {
  unsigned peer_bits, delta_bits, base_bits;
};

Widths WidthsOf(const EdgeEntry* entries, uint32_t n) {
  uint32_t largest = 0;
  for (uint32_t i = 0; i < n; ++i) largest = std::max(largest, uint32_t{entries[i].peer});
  const auto base = static_cast<uint64_t>(EntryTs(entries[0]));
  const auto span = static_cast<uint64_t>(EntryTs(entries[n - 1])) - base;
  return {std::max(1u, static_cast<unsigned>(std::bit_width(largest))),
          static_cast<unsigned>(std::bit_width(span)), (base >> 32) != 0 ? 42u : 32u};
}

}  // namespace

uint32_t EncodeShortRun(const EdgeEntry* entries, uint32_t n,
                        uint64_t (&buffer)[kShortRunMaxWords64]) {
  const Widths w = WidthsOf(entries, n);
  std::fill(std::begin(buffer), std::end(buffer), 0);
  BitSink out(reinterpret_cast<char*>(buffer), 0);  // in order, no read-modify-writes
  const auto base = static_cast<uint64_t>(EntryTs(entries[0]));
  out.Put((w.peer_bits - 1) | (w.delta_bits << 5) | (w.base_bits == 42 ? 1u << 11 : 0), 12);
  out.Put(base, w.base_bits);
  for (uint32_t i = 0; i < n; ++i) {
    out.Put(uint64_t{entries[i].peer} | (uint64_t{EntryMutual(entries[i])} << w.peer_bits),
            w.peer_bits + 1);
    if (i > 0) out.Put(static_cast<uint64_t>(EntryTs(entries[i])) - base, w.delta_bits);
  }
  out.Flush();
  return ShortRun::Words(n, w.peer_bits, w.delta_bits, w.base_bits);
}

// Writes one field of a block of `bytes` bytes with an 8-byte read-modify-write that starts
// at the field's first byte, or ends at the block's last byte when that would pass it: unlike
// ShortRun's reads, a write must not touch a neighbour.
static void StoreField(char* block, uint32_t bytes, uint64_t bit, unsigned width, uint64_t value) {
  if (width == 0) return;
  const uint32_t at = std::min(static_cast<uint32_t>(bit >> 3), bytes - 8);
  uint64_t w;
  std::memcpy(&w, block + at, sizeof(w));
  const unsigned shift = static_cast<unsigned>(bit - 8 * uint64_t{at});
  const uint64_t mask = ((uint64_t{1} << width) - 1) << shift;
  w = (w & ~mask) | ((value << shift) & mask);
  std::memcpy(block + at, &w, sizeof(w));
}

void ShortRun::Append(char* block, const EdgeEntry& e) const {
  const uint32_t bytes = 4 * words_after_append();
  const uint64_t bit = EntryBit(n_);
  StoreField(block, bytes, bit, peer_bits_, e.peer);
  StoreField(block, bytes, bit + peer_bits_, 1, EntryMutual(e) ? 1 : 0);
  StoreField(block, bytes, bit + peer_bits_ + 1, delta_bits_,
             static_cast<uint64_t>(EntryTs(e) - base_));
}

void ShortRun::SetMutual(char* block, uint32_t i, bool mutual) const {
  StoreField(block, bytes_, EntryBit(i) + peer_bits_, 1, mutual ? 1 : 0);
}

char* AllocateShortRun(const EdgeEntry* entries, uint32_t n, SlabAllocator& slab) {
  uint64_t buffer[kShortRunMaxWords64];
  const uint32_t words = EncodeShortRun(entries, n, buffer);
  char* block = static_cast<char*>(slab.AllocateWords(words));
  std::memcpy(block, buffer, 4 * size_t{words});
  return block;
}

void FreeShortRun(char* block, uint32_t n, SlabAllocator& slab) {
  slab.FreeWords(block, ShortRun(block, n).words());
}

char* AppendToShortRun(char* block, uint32_t n, const EdgeEntry& e, SlabAllocator& slab) {
  const ShortRun run(block, n);
  if (!run.CanAppend(e)) return nullptr;
  const uint32_t words = run.words();
  const uint32_t grown = run.words_after_append();
  if (SlabAllocator::WordBlockBytes(words) == SlabAllocator::WordBlockBytes(grown)) {
    run.Append(block, e);
    return block;
  }
  auto* target = static_cast<char*>(slab.AllocateWords(grown));
  std::memcpy(target, block, 4 * size_t{words});
  run.Append(target, e);
  slab.FreeWords(block, words);
  return target;
}

}  // namespace relgraph
