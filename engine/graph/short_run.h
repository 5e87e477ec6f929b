// ShortRun: a list of kShortRunMin..kShortRunMax (2..7) entries bit-packed, with its widths
// in a 12-bit prefix instead of a header, in a block of 4-byte words
// (SlabAllocator::AllocateWords). Following lists and fan lists of that length take this form.
//
// Why this design: on a social graph about a third of all list entries sit in lists of fewer
// than 8 entries (most users follow few and have few fans). Plain, such an entry takes 10
// bytes (u32 peer, 42-bit time, kMutual bit); the packed forms of longer lists
// (FollowingList's, PackedRun) spend an 8-byte header and 10-byte slab units, more than they
// would save on a handful of entries. Here the widths take 12 bits, the oldest time is
// written once (32 bits when it fits, as seconds do), each later time as its distance from
// it, each peer at the width of the largest, and the block rounds up to 4 bytes rather than
// 10: a list of three at 1 ms takes ~24 bytes instead of 30, at 1 s ~20. A one-entry list
// stays plain (10 bytes): the prefix and the full time leave nothing to gain.
//
// The newest entry appends in place when the widths hold it, and a kMutual bit changes in
// place; any other change encodes the run again (at most 7 entries). Reading one entry is a
// few shifts and masks; a scan for a peer decodes at most 7 fields.
//
// Layout, bits from the low bit of the block's first byte up (little-endian):
//   peer_bits - 1 : 5   (peer_bits 1..32: the width of the largest peer, at least 1)
//   delta_bits    : 6   (0..42: the width of the newest time minus the oldest)
//   wide_base     : 1   the base takes 42 bits (else 32)
//   base          : 32 or 42   the oldest entry's time
//   entry 0       : peer (peer_bits), kMutual (1)
//   entry i >= 1  : peer (peer_bits), kMutual (1), time - base (delta_bits)
// The block is EncodeShortRun's words, at least 2. A field is read with one 8-byte load that
// starts at the field's first byte: it may read up to 7 bytes past the block, which the
// slab's word ladder keeps readable (SlabAllocator::AllocateWords). Writes (an append, a
// kMutual change) end at the block's last byte, so no write touches a neighbour.
//
// Thread-safety: pure functions and views over the caller's memory; the owner serializes
// changes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "engine/graph/edge_entry.h"
#include "engine/graph/slab_allocator.h"

namespace relgraph {

inline constexpr uint32_t kShortRunMin = 2;
inline constexpr uint32_t kShortRunMax = 7;

// The largest run in 64-bit words: 12 + 42 + 7 * 33 + 6 * 42 = 537 bits.
inline constexpr uint32_t kShortRunMaxWords64 = 9;

// Encodes the run of these n entries (in key order) into `buffer` and returns its size in
// 4-byte words: the owner allocates that many and copies them. REQUIRES: n in
// [kShortRunMin, kShortRunMax].
uint32_t EncodeShortRun(const EdgeEntry* entries, uint32_t n,
                        uint64_t (&buffer)[kShortRunMaxWords64]);

// A run's widths and base, read from its first 8 bytes once for a whole operation.
class ShortRun {
 public:
  ShortRun(const char* block, uint32_t n) : block_(block), n_(n) {
    uint64_t w;
    std::memcpy(&w, block, sizeof(w));
    peer_bits_ = static_cast<unsigned>(w & 31) + 1;
    delta_bits_ = static_cast<unsigned>((w >> 5) & 63);
    const unsigned base_bits = ((w >> 11) & 1) != 0 ? 42 : 32;
    base_ = static_cast<TimestampMs>((w >> 12) & ((uint64_t{1} << base_bits) - 1));
    first_bit_ = 12 + base_bits;
    stride_ = peer_bits_ + 1 + delta_bits_;
    bytes_ = 4 * Words(n, peer_bits_, delta_bits_, base_bits);
  }

  uint32_t size() const { return n_; }
  uint32_t words() const { return bytes_ / 4; }
  InternalId Peer(uint32_t i) const {
    return static_cast<InternalId>(Field(EntryBit(i), peer_bits_));
  }
  bool Mutual(uint32_t i) const { return Field(EntryBit(i) + peer_bits_, 1) != 0; }
  TimestampMs Ts(uint32_t i) const {
    if (i == 0 || delta_bits_ == 0) return base_;
    return base_ + static_cast<TimestampMs>(Field(EntryBit(i) + peer_bits_ + 1, delta_bits_));
  }
  EdgeEntry At(uint32_t i) const { return MakeEntry(Peer(i), Ts(i), Mutual(i)); }
  // Entries [0, size()) into out.
  void Decode(EdgeEntry* out) const {
    for (uint32_t i = 0; i < n_; ++i) out[i] = At(i);
  }
  // Index of `peer`, or size().
  uint32_t FindPeer(InternalId peer) const {
    if ((uint64_t{peer} >> peer_bits_) != 0) return n_;  // wider than every peer here
    if (Field(first_bit_, peer_bits_) == peer) return 0;
    uint64_t bit = first_bit_ + peer_bits_ + 1;
    for (uint32_t i = 1; i < n_; ++i, bit += stride_) {
      if (Field(bit, peer_bits_) == peer) return i;
    }
    return n_;
  }
  // Sets entry i's kMutual bit in place (the widths do not change). `block` is this run's.
  void SetMutual(char* block, uint32_t i, bool mutual) const;

  // Whether `e`, newer than every entry, can be appended at this run's widths and base (then
  // the run of size() + 1 takes words_after_append() words). REQUIRES: size() < kShortRunMax.
  bool CanAppend(const EdgeEntry& e) const {
    const auto delta = static_cast<uint64_t>(EntryTs(e) - base_);
    return (uint64_t{e.peer} >> peer_bits_) == 0 && EntryTs(e) >= base_ &&
           (delta >> delta_bits_) == 0;
  }
  uint32_t words_after_append() const {
    return Words(n_ + 1, peer_bits_, delta_bits_, base_bits());
  }
  // Writes `e` as entry size() of the run at `block`, which holds words_after_append() words
  // and this run's bits. REQUIRES: CanAppend(e).
  void Append(char* block, const EdgeEntry& e) const;

  // The words of a run of n entries at these widths.
  static uint32_t Words(uint32_t n, unsigned peer_bits, unsigned delta_bits, unsigned base_bits) {
    const uint64_t bits =
        12 + base_bits + uint64_t{n} * (peer_bits + 1) + uint64_t{n - 1} * delta_bits;
    return std::max<uint32_t>(2, static_cast<uint32_t>((bits + 31) / 32));
  }

 private:
  uint64_t EntryBit(uint32_t i) const {
    return i == 0 ? first_bit_ : first_bit_ + peer_bits_ + 1 + uint64_t{i - 1} * stride_;
  }
  unsigned base_bits() const { return static_cast<unsigned>(first_bit_) - 12; }
  // A field of 1 to 42 bits, from an 8-byte load at its first byte (inside the block, so
  // the load ends at most 7 bytes past it).
  uint64_t Field(uint64_t bit, unsigned width) const {
    uint64_t w;
    std::memcpy(&w, block_ + (bit >> 3), sizeof(w));
    return (w >> (bit & 7)) & ((uint64_t{1} << width) - 1);
  }

  const char* block_;
  uint32_t n_;
  unsigned peer_bits_ = 1, delta_bits_ = 0, stride_ = 2;
  uint64_t first_bit_ = 44;
  uint32_t bytes_ = 8;
  TimestampMs base_ = 0;
};

// A block of slab's word ladder holding the run of these n entries (in key order).
// REQUIRES: n in [kShortRunMin, kShortRunMax].
char* AllocateShortRun(const EdgeEntry* entries, uint32_t n, SlabAllocator& slab);
// Frees the block of a run of n entries.
void FreeShortRun(char* block, uint32_t n, SlabAllocator& slab);
// Appends `e`, newer than every entry, to the run of n entries at `block` when the run's
// widths hold it: in place when the block's class has room, else in a larger block (the old
// one freed). Returns the run's block, or nullptr (nothing changed) when the widths do not
// hold `e`. REQUIRES: n in [kShortRunMin, kShortRunMax).
char* AppendToShortRun(char* block, uint32_t n, const EdgeEntry& e, SlabAllocator& slab);

}  // namespace relgraph
