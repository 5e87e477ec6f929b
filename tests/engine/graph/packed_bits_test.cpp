#include <doctest.h>

#include <random>
#include <vector>

#include "engine/graph/packed_bits.h"

namespace relgraph {
namespace {

// A byte array with 8 readable bytes in front, as the packed forms keep, and the same bits
// as a vector of bools.
struct Bits {
  std::vector<char> bytes;
  std::vector<bool> ref;
  explicit Bits(size_t n, std::mt19937_64& rng) : bytes(8 + (n + 7) / 8), ref(n) {
    for (char& b : bytes) b = static_cast<char>(rng());
    for (size_t i = 0; i < n; ++i) ref[i] = ((data()[i / 8] >> (i % 8)) & 1) != 0;
  }
  char* data() { return bytes.data() + 8; }
  void Check() {
    for (size_t i = 0; i < ref.size(); ++i)
      REQUIRE((((data()[i / 8] >> (i % 8)) & 1) != 0) == ref[i]);
  }
};

TEST_CASE("packed_bits: fields read and write as the bits they cover") {
  std::mt19937_64 rng(3);
  Bits b(4000, rng);
  for (int step = 0; step < 20000; ++step) {
    const auto width = static_cast<unsigned>(rng() % 58);
    const uint64_t bit = rng() % (b.ref.size() - width + 1);
    uint64_t want = 0;
    for (unsigned k = 0; k < width; ++k) want |= uint64_t{b.ref[bit + k]} << k;
    REQUIRE(LoadBits(b.data(), bit, width) == want);
    if (width > 0) {
      REQUIRE(LoadBitsEndingAt(b.data(), bit + width, width) == want);
    }
    const uint64_t value = rng();
    StoreBits(b.data(), bit, width, value);
    for (unsigned k = 0; k < width; ++k) b.ref[bit + k] = ((value >> k) & 1) != 0;
    if (step % 500 == 0) b.Check();
  }
  b.Check();
}

TEST_CASE("packed_bits: moves up and down match a bit vector, at every offset and length") {
  std::mt19937_64 rng(8);
  for (int step = 0; step < 6000; ++step) {
    const size_t n = 1 + rng() % 1200;
    Bits b(n, rng);
    const uint64_t shift = 1 + rng() % std::min<uint64_t>(n, 80);
    if (shift >= n) continue;
    const uint64_t low = rng() % (n - shift);
    const uint64_t len = rng() % (n - shift - low + 1);
    const bool down = rng() % 2 == 0;
    const std::vector<bool> before = b.ref;
    if (down) {
      MoveBitsDown(b.data(), low, low + shift, len);
      for (uint64_t k = 0; k < len; ++k) b.ref[low + k] = before[low + shift + k];
    } else {
      MoveBitsUp(b.data(), low + shift, low, len);
      for (uint64_t k = 0; k < len; ++k) b.ref[low + shift + k] = before[low + k];
    }
    b.Check();  // the moved span, and every bit outside it unchanged
  }
}

}  // namespace
}  // namespace relgraph
