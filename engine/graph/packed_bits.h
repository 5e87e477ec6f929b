// Fixed-width bit fields in a byte array, and moves of a span of bits within one: what the
// bit-packed list forms (PackedRun's fan entries, FollowingList's times) are built from.
//
// A field is read and written with one 8-byte access that ends at the field's last byte,
// so no access passes the end of the data; the caller keeps 8 readable bytes in front of
// the array (a header, or another array of the same block) for the first fields.
//
// Thread-safety: pure functions over the caller's memory.
#pragma once

#include <cstdint>
#include <cstring>

namespace relgraph {

// The `width` bits of `bits` from bit `bit`. REQUIRES: width <= 57.
inline uint64_t LoadBits(const char* bits, uint64_t bit, unsigned width) {
  if (width == 0) return 0;
  const auto last = static_cast<int64_t>((bit + width - 1) >> 3);
  uint64_t word;
  std::memcpy(&word, bits + last - 7, sizeof(word));
  const auto shift = static_cast<unsigned>(static_cast<int64_t>(bit) - 8 * (last - 7));
  return (word >> shift) & ((uint64_t{1} << width) - 1);
}

// Writes the low `width` bits of `value` at bit `bit`. REQUIRES: width <= 57.
inline void StoreBits(char* bits, uint64_t bit, unsigned width, uint64_t value) {
  if (width == 0) return;
  const auto last = static_cast<int64_t>((bit + width - 1) >> 3);
  uint64_t word;
  std::memcpy(&word, bits + last - 7, sizeof(word));
  const auto shift = static_cast<unsigned>(static_cast<int64_t>(bit) - 8 * (last - 7));
  const uint64_t mask = ((uint64_t{1} << width) - 1) << shift;
  word = (word & ~mask) | ((value << shift) & mask);
  std::memcpy(bits + last - 7, &word, sizeof(word));
}

// The `width` bits that end at bit `end` (exclusive), read with a load whose address needs
// only `end`: for the last field of a fixed-width record, found before the other fields'
// widths are known. REQUIRES: 0 < width <= 57, width <= end.
inline uint64_t LoadBitsEndingAt(const char* bits, uint64_t end, unsigned width) {
  const auto last = static_cast<int64_t>((end - 1) >> 3);
  uint64_t word;
  std::memcpy(&word, bits + last - 7, sizeof(word));
  const auto shift = static_cast<unsigned>(static_cast<int64_t>(end - width) - 8 * (last - 7));
  return (word >> shift) & ((uint64_t{1} << width) - 1);
}

// Writes fields one after another from bit `pos` of `bits`, through a 64-bit accumulator
// stored 4 bytes at a time: a run of StoreBits would load each word its previous store
// just wrote (a store-forwarding stall a field). Bits past the last field up to the end of
// its byte are left unspecified.
class BitSink {
 public:
  BitSink(char* bits, uint64_t pos) : out_(bits + pos / 8), used_(static_cast<unsigned>(pos % 8)) {
    acc_ = static_cast<uint8_t>(*out_) & ((1u << used_) - 1);  // the bits before pos stay
  }
  // REQUIRES: width <= 56, value < 2^width.
  void Put(uint64_t value, unsigned width) {
    if (width > 32) {
      Put(value & 0xFFFFFFFF, 32);
      value >>= 32;
      width -= 32;
    }
    acc_ |= value << used_;
    used_ += width;
    if (used_ >= 32) {
      const auto low = static_cast<uint32_t>(acc_);
      std::memcpy(out_, &low, sizeof(low));
      out_ += 4;
      acc_ >>= 32;
      used_ -= 32;
    }
  }
  void Flush() {
    for (unsigned b = 0; b < used_; b += 8, acc_ >>= 8) *out_++ = static_cast<char>(acc_);
    used_ = 0;
  }

 private:
  char* out_;
  uint64_t acc_;
  unsigned used_;  // < 32 between calls
};

// Moves bits [src, src + len) of `bits` down to dst < src, or up to dst > src. Whole 8-byte
// words are written at 64-bit boundaries and each is read from the source at any bit
// offset, so no read waits on a write it overlaps and a long move runs near memmove's
// speed; the ends, under a word each, go field by field. Bits outside [dst, dst + len) keep
// their values.
void MoveBitsDown(char* bits, uint64_t dst, uint64_t src, uint64_t len);
void MoveBitsUp(char* bits, uint64_t dst, uint64_t src, uint64_t len);

}  // namespace relgraph
