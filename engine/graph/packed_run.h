// PackedRun: a sorted run of fan entries bit-packed at the widths it needs, in one slab block:
// the form docs/design.md ("What is left to take", step 1) plans for fan lists of 8 or more
// entries and for the chunks of long ones.
//
// Why this design: a fan entry stored plainly takes 10 bytes (u32 peer, 42-bit time, kMutual
// bit), but within a run the peers need only as many bits as the largest of them and the
// times only as many as the run's span. A run keeps every entry at the same widths, so any
// entry is found with a shift and a mask: a binary search and a page stay O(log n) and
// O(limit). Appending the newest entry, the common change, writes in place while the entry
// fits the widths; so does dropping the newest. Other changes decode the run, change it and
// encode it again, O(n) for a run of at most a fan chunk (<= 1,024 entries).
//
// Block layout (little-endian):
//   header u64: bits 0..41 the base time (the oldest entry's), 42..47 peer_bits (0..32),
//               48..53 time_bits (0..42), the rest zero
//   payload: entry i at bit i * W, W = peer_bits + 1 + time_bits, low bits first:
//               peer (peer_bits) | kMutual (1) | time - base (time_bits)
// The block is AllocateBlock(Units(n, W)) of the owner's SlabAllocator (10-byte units), a
// function of the size and the widths, so the run keeps no capacity field. A field is read
// with one 8-byte load that ends at the field's last byte: no read passes the block's end,
// and the header in front keeps the first fields' loads inside the block.
//
// The handle keeps the entry width W beside the size, so the address of any entry is known
// before the header is: a search's first probe and an append's read of the newest entry
// go to memory together with the header, not after it.
//
// Thread-safety: none; the owner serializes mutations, const reads may run concurrently.
// 12 bytes, 4-byte aligned, like EntryArray.
#pragma once

#include <cstdint>
#include <cstring>

#include "engine/graph/edge_entry.h"
#include "engine/graph/packed_bits.h"
#include "engine/graph/slab_allocator.h"

namespace relgraph {

// The widths and base of a run, read from its header once for a whole operation.
struct PackedFields {
  const char* payload = nullptr;  // 8 readable bytes in front (the header)
  TimestampMs base = 0;
  unsigned peer_bits = 0, time_bits = 0, width = 1;

  InternalId Peer(uint32_t i) const {
    return static_cast<InternalId>(LoadBits(payload, uint64_t{i} * width, peer_bits));
  }
  bool Mutual(uint32_t i) const {
    return LoadBits(payload, uint64_t{i} * width + peer_bits, 1) != 0;
  }
  // The time is an entry's last field: its load ends at the entry's last byte, an address
  // that needs only `width` (which the handle holds), so it can start before the header is
  // read.
  TimestampMs Ts(uint32_t i) const {
    if (time_bits == 0) return base;
    return base + static_cast<TimestampMs>(
                      LoadBitsEndingAt(payload, (uint64_t{i} + 1) * width, time_bits));
  }
  EdgeEntry At(uint32_t i) const {
    if (width <= 57) {
      // The whole entry in one load.
      const uint64_t v = LoadBits(payload, uint64_t{i} * width, width);
      return MakeEntry(static_cast<InternalId>(v & ((uint64_t{1} << peer_bits) - 1)),
                       base + static_cast<TimestampMs>(v >> (peer_bits + 1)),
                       ((v >> peer_bits) & 1) != 0);
    }
    return MakeEntry(Peer(i), Ts(i), Mutual(i));
  }
  // Whether `e` fits these widths and base.
  bool Fits(const EdgeEntry& e) const {
    const TimestampMs ts = EntryTs(e);
    return ts >= base && (uint64_t{e.peer} >> peer_bits) == 0 &&
           (static_cast<uint64_t>(ts - base) >> time_bits) == 0;
  }
};

#pragma pack(push, 4)
class PackedRun {
 public:
  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  InternalId PeerAt(uint32_t i) const { return fields().Peer(i); }
  bool MutualAt(uint32_t i) const { return fields().Mutual(i); }
  TimestampMs TsAt(uint32_t i) const { return fields().Ts(i); }
  EdgeEntry At(uint32_t i) const { return fields().At(i); }
  void SetMutual(uint32_t i, bool mutual) {
    const PackedFields f = fields();
    StoreBits(block_ + 8, uint64_t{i} * f.width + f.peer_bits, 1, mutual ? 1 : 0);
  }

  // Number of entries whose key is < k.
  size_t Rank(const EntryKey& k, const EntryOrder& order) const;
  // Index of the entry with key k, or size().
  size_t Find(const EntryKey& k, const EntryOrder& order) const;
  // Index of the entry whose peer is `peer`, or size(). Linear.
  size_t FindPeer(InternalId peer) const;
  // Copies up to `limit` entries with rank < end into `out`, newest first; returns the count.
  uint32_t CopyDescending(size_t end, uint32_t limit, EdgeEntry* out) const;
  // Every entry into out[0, size()), oldest first.
  void Decode(EdgeEntry* out) const;

  // Inserts `e` at its place in key order. REQUIRES: no entry with the same key.
  void Insert(const EdgeEntry& e, const EntryOrder& order, SlabAllocator& slab);
  // REQUIRES: pos <= size(), and `e` sorts between the entries around pos.
  void InsertAt(uint32_t pos, const EdgeEntry& e, SlabAllocator& slab);
  // Keeps the widths and the base (still at most every time), so it only moves the bits
  // after pos.
  void EraseAt(uint32_t pos, SlabAllocator& slab);
  // Appends `n` entries that sort after every present one, in key order.
  void AppendRun(const EdgeEntry* src, uint32_t n, SlabAllocator& slab);
  // Keeps the first `n` entries. REQUIRES: n <= size().
  void Truncate(uint32_t n, SlabAllocator& slab);
  void Clear(SlabAllocator& slab);

  // The bits of one entry (0 when empty): an owner that keeps the handle elsewhere keeps it
  // too and gives it back to Adopt.
  unsigned entry_width() const { return width_; }
  // Adopts a block holding `size` entries of `width` bits (as Release gave it, with
  // size() and entry_width() read before); releases ownership.
  void Adopt(char* block, uint32_t size, unsigned width) {
    block_ = block;
    size_ = size;
    width_ = width;
  }
  char* Release() {
    char* b = block_;
    block_ = nullptr;
    size_ = 0;
    width_ = 0;
    return b;
  }
  // Hints the CPU to fetch what an insert of the newest entry reads: the header and the
  // newest entry (which it compares first and an append writes beside).
  void PrefetchForAppend() const {
    if (block_ == nullptr) return;
    __builtin_prefetch(block_);
    __builtin_prefetch(block_ + 8 + (uint64_t{size_} * width_ - 1) / 8);
  }

  // The widths and base (all zero, width 1, when empty).
  PackedFields fields() const {
    PackedFields f;
    if (block_ == nullptr) return f;
    uint64_t h;
    std::memcpy(&h, block_, sizeof(h));
    f.payload = block_ + 8;
    f.base = static_cast<TimestampMs>(h & ((uint64_t{1} << 42) - 1));
    f.peer_bits = static_cast<unsigned>((h >> 42) & 63);
    f.time_bits = static_cast<unsigned>((h >> 48) & 63);
    f.width = width_;  // == peer_bits + 1 + time_bits, from the handle (see above)
    return f;
  }
  unsigned peer_bits() const { return fields().peer_bits; }
  unsigned time_bits() const { return fields().time_bits; }
  // Bytes of the block as the slab counts them (0 when empty).
  size_t BlockBytes() const;
  // The 10-byte slab units of a run of n entries of W bits (header included).
  static uint32_t Units(uint32_t n, unsigned w) {
    return static_cast<uint32_t>((8 + (uint64_t{n} * w + 7) / 8 + 9) / 10);
  }

 private:
  // Writes entry i's fields. REQUIRES: e fits f.
  void Put(const PackedFields& f, uint32_t i, const EdgeEntry& e) {
    char* payload = block_ + 8;
    const uint64_t bit = uint64_t{i} * f.width;
    StoreBits(payload, bit, f.peer_bits + 1,
              uint64_t{e.peer} | (uint64_t{EntryMutual(e)} << f.peer_bits));
    StoreBits(payload, bit + f.peer_bits + 1, f.time_bits,
              static_cast<uint64_t>(EntryTs(e) - f.base));
  }
  // Moves the run to a block for `n` entries at the same widths, keeping the first
  // min(size, n) entries' bits. REQUIRES: not empty.
  void ResizeSameWidths(const PackedFields& f, uint32_t n, SlabAllocator& slab);
  // Replaces the run by `n` entries in key order, at the widths they need.
  void Encode(const EdgeEntry* entries, uint32_t n, SlabAllocator& slab);

  char* block_ = nullptr;
  uint32_t size_ : 24 = 0;  // a run holds at most a fan chunk (<= 1,024 entries)
  uint32_t width_ : 8 = 0;  // W, 0 when empty
};
#pragma pack(pop)
static_assert(sizeof(PackedRun) == 12);

}  // namespace relgraph
