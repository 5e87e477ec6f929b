// Fixed-width and varint coding: round trips at every width, and the decoder's refusals.
#include "storage/coding.h"

#include <doctest.h>

#include <random>

namespace relgraph {
namespace {

TEST_CASE("coding: varints round-trip at every bit width and take ceil(bits / 7) bytes") {
  std::mt19937_64 rng(3);
  for (int bits = 0; bits <= 64; ++bits) {
    for (int k = 0; k < 50; ++k) {
      uint64_t v = bits == 0 ? 0 : (rng() >> (64 - bits)) | (uint64_t{1} << (bits - 1));
      if (k == 0 && bits > 0) v = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
      std::string out;
      PutVarint64(&out, v);
      CHECK(out.size() == static_cast<size_t>(bits == 0 ? 1 : (bits + 6) / 7));
      out += "tail";
      Decoder d(out);
      uint64_t back = 0;
      REQUIRE(d.Varint64(&back));
      CHECK(back == v);
      CHECK(d.remaining() == 4);
    }
  }
}

TEST_CASE("coding: a varint cut short, too long or past 64 bits is refused") {
  std::string full;
  PutVarint64(&full, UINT64_MAX);
  for (size_t n = 0; n < full.size(); ++n) {
    Decoder d(std::string_view(full).substr(0, n));
    uint64_t v;
    CHECK_FALSE(d.Varint64(&v));
  }
  std::string eleven(10, static_cast<char>(0x80));
  eleven.push_back(0);
  uint64_t v;
  CHECK_FALSE(Decoder(eleven).Varint64(&v));
  std::string past = std::string(9, static_cast<char>(0xff)) + static_cast<char>(0x02);
  CHECK_FALSE(Decoder(past).Varint64(&v));
  std::string wide;
  PutVarint64(&wide, uint64_t{UINT32_MAX} + 1);
  uint32_t narrow;
  CHECK_FALSE(Decoder(wide).Varint32(&narrow));
  std::string fits;
  PutVarint64(&fits, UINT32_MAX);
  REQUIRE(Decoder(fits).Varint32(&narrow));
  CHECK(narrow == UINT32_MAX);
}

TEST_CASE("coding: fixed-width fields are little-endian and refused past the end") {
  std::string out;
  PutFixed32(&out, 0x04030201);
  PutFixed64(&out, 0x0c0b0a0908070605);
  CHECK(out == std::string("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c", 12));
  Decoder d(out);
  uint32_t a;
  uint64_t b;
  REQUIRE(d.U32(&a));
  REQUIRE(d.U64(&b));
  CHECK(a == 0x04030201);
  CHECK(b == 0x0c0b0a0908070605);
  CHECK_FALSE(d.U32(&a));
}

}  // namespace
}  // namespace relgraph
