// Little-endian fixed-width encoding for the on-disk formats (WAL, snapshots), and LEB128
// varints (7 bits a byte, low groups first, the high bit set on every byte but the last).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace relgraph {

inline void EncodeFixed64(char* dst, uint64_t v) {
  for (int i = 0; i < 8; ++i) dst[i] = static_cast<char>(v >> (8 * i));
}
inline void EncodeFixed32(char* dst, uint32_t v) {
  for (int i = 0; i < 4; ++i) dst[i] = static_cast<char>(v >> (8 * i));
}
inline void PutFixed32(std::string* dst, uint32_t v) {
  char b[4];
  EncodeFixed32(b, v);
  dst->append(b, 4);
}
inline void PutFixed64(std::string* dst, uint64_t v) {
  char b[8];
  EncodeFixed64(b, v);
  dst->append(b, 8);
}
inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return v;
}
inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return v;
}

inline void PutVarint64(std::string* dst, uint64_t v) {
  while (v >= 0x80) {
    dst->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  dst->push_back(static_cast<char>(v));
}

// Reads fixed-width fields from a byte range; every getter fails (returns false) past the end.
class Decoder {
 public:
  explicit Decoder(std::string_view in) : in_(in) {}
  bool U8(uint8_t* v) {
    if (in_.size() < 1) return false;
    *v = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return true;
  }
  bool U32(uint32_t* v) {
    if (in_.size() < 4) return false;
    *v = DecodeFixed32(in_.data());
    in_.remove_prefix(4);
    return true;
  }
  bool U64(uint64_t* v) {
    if (in_.size() < 8) return false;
    *v = DecodeFixed64(in_.data());
    in_.remove_prefix(8);
    return true;
  }
  bool I64(int64_t* v) {
    uint64_t u;
    if (!U64(&u)) return false;
    *v = static_cast<int64_t>(u);
    return true;
  }
  // A varint of at most 10 bytes whose value fits 64 bits; false when cut short or longer.
  bool Varint64(uint64_t* v) {
    uint64_t out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (in_.empty()) return false;
      const auto byte = static_cast<uint8_t>(in_[0]);
      in_.remove_prefix(1);
      if (shift == 63 && byte > 1) return false;  // the 10th byte holds bit 63 alone
      out |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) {
        *v = out;
        return true;
      }
    }
    return false;
  }
  // A varint whose value fits 32 bits.
  bool Varint32(uint32_t* v) {
    uint64_t wide;
    if (!Varint64(&wide) || wide > UINT32_MAX) return false;
    *v = static_cast<uint32_t>(wide);
    return true;
  }
  size_t remaining() const { return in_.size(); }
  // The next n bytes. REQUIRES: n <= remaining().
  std::string_view Take(size_t n) {
    const std::string_view out = in_.substr(0, n);
    in_.remove_prefix(n);
    return out;
  }

 private:
  std::string_view in_;
};

}  // namespace relgraph
