#include "engine/graph/packed_bits.h"

#include <algorithm>

namespace relgraph {
namespace {

// Bits moved at a time at the ends: a piece and its offset in a byte stay within one load.
constexpr unsigned kPiece = 56;

void MovePieces(char* bits, uint64_t dst, uint64_t src, uint64_t len) {
  for (uint64_t off = 0; off < len; off += kPiece) {
    const auto k = static_cast<unsigned>(std::min<uint64_t>(kPiece, len - off));
    StoreBits(bits, dst + off, k, LoadBits(bits, src + off, k));
  }
}

// The 64 bits of `bits` from bit `bit`. REQUIRES: bit + 64 <= the end of the data.
uint64_t Bits64(const char* bits, uint64_t bit) {
  uint64_t word;
  std::memcpy(&word, bits + bit / 8, sizeof(word));
  const auto shift = static_cast<unsigned>(bit % 8);
  if (shift == 0) return word;
  const auto next = static_cast<uint8_t>(bits[bit / 8 + 8]);
  return (word >> shift) | (uint64_t{next} << (64 - shift));
}

void PutWord(char* bits, uint64_t bit, uint64_t word) {
  std::memcpy(bits + bit / 8, &word, sizeof(word));
}

}  // namespace

// Down: from the front, so each word
// is read before a later write reaches it.
void MoveBitsDown(char* bits, uint64_t dst, uint64_t src, uint64_t len) {
  const uint64_t head = std::min<uint64_t>(len, (64 - dst % 64) % 64);
  MovePieces(bits, dst, src, head);
  uint64_t done = head;
  for (; len - done >= 64; done += 64) PutWord(bits, dst + done, Bits64(bits, src + done));
  MovePieces(bits, dst + done, src + done, len - done);
}

// Up: from the back.
void MoveBitsUp(char* bits, uint64_t dst, uint64_t src, uint64_t len) {
  const uint64_t tail = std::min<uint64_t>(len, (dst + len) % 64);
  uint64_t end = len - tail;             // bits [0, end) are left to move
  for (uint64_t off = tail; off > 0;) {  // the tail, from its back
    const auto k = static_cast<unsigned>(std::min<uint64_t>(kPiece, off));
    off -= k;
    StoreBits(bits, dst + end + off, k, LoadBits(bits, src + end + off, k));
  }
  for (; end >= 64; end -= 64) PutWord(bits, dst + end - 64, Bits64(bits, src + end - 64));
  for (uint64_t off = end; off > 0;) {  // the head, from its back
    const auto k = static_cast<unsigned>(std::min<uint64_t>(kPiece, off));
    off -= k;
    StoreBits(bits, dst + off, k, LoadBits(bits, src + off, k));
  }
}

}  // namespace relgraph
