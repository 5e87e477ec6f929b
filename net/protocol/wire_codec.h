// Field-by-field body encoding of the wire protocol (docs/protocol.md, "Field types").
//
//   u8 u16 u32 u64 i64   little-endian fixed width
//   bool                 u8, 0 or 1
//   string               len:u16 bytes
//   opt<T>               u8 0 | u8 1 T
//   list<T>              count:u16 T*count
//   struct               its fields in declaration order (RELGRAPH_WIRE_FIELDS)
//   enum                 its underlying integer
//
// Why this design: every message is a plain struct that lists its fields once with
// RELGRAPH_WIRE_FIELDS; one generic writer and one generic reader walk that list, so the encoder
// and the decoder cannot disagree and a new command costs a struct, not two hand-written codecs.
//
// Thread-safety: pure functions over caller-owned buffers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "storage/status.h"

// Declares a message's fields, in wire order; WireNames() spells them as written ("a, b, c"),
// the names the JSON form uses (json_codec.h).
#define RELGRAPH_WIRE_FIELDS(...)                                 \
  auto WireTie() {                                                \
    return std::tie(__VA_ARGS__);                                 \
  }                                                               \
  auto WireTie() const {                                          \
    return std::tie(__VA_ARGS__);                                 \
  }                                                               \
  static constexpr std::string_view WireNames() {                 \
    return #__VA_ARGS__;                                          \
  }

namespace relgraph::net {

inline constexpr size_t kMaxWireList = 65535;
inline constexpr size_t kMaxWireString = 65535;

template <typename T>
concept WireStruct = requires(T t) {
  t.WireTie();
};

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};

template <typename T>
void WireFixed(std::string* out, T v) {
  static_assert(std::is_unsigned_v<T>);
  char b[sizeof(T)];
  for (size_t i = 0; i < sizeof(T); ++i) b[i] = static_cast<char>(v >> (8 * i));
  out->append(b, sizeof(T));
}

// Appends the encoding of `v` to *out. REQUIRES: lists and strings within the u16 count limit
// (callers validate sizes first; the engine's batch and page limits are far below it).
template <typename T>
void WirePut(std::string* out, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    out->push_back(v ? 1 : 0);
  } else if constexpr (std::is_enum_v<T>) {
    WirePut(out, static_cast<std::underlying_type_t<T>>(v));
  } else if constexpr (std::is_integral_v<T>) {
    WireFixed(out, static_cast<std::make_unsigned_t<T>>(v));
  } else if constexpr (std::is_same_v<T, std::string>) {
    WireFixed(out, static_cast<uint16_t>(v.size()));
    out->append(v);
  } else if constexpr (IsOptional<T>::value) {
    out->push_back(v.has_value() ? 1 : 0);
    if (v) WirePut(out, *v);
  } else if constexpr (IsVector<T>::value) {
    WireFixed(out, static_cast<uint16_t>(v.size()));
    for (const auto& e : v) WirePut(out, e);
  } else {
    static_assert(WireStruct<T>, "no wire encoding for this type");
    std::apply([out](const auto&... f) { (WirePut(out, f), ...); }, v.WireTie());
  }
}

// Reads fields from a body; the first failure sticks and names the offset where it happened.
class WireReader {
 public:
  explicit WireReader(std::string_view in) : in_(in) {}

  template <typename T>
  void Get(T* v) {
    if (!error_.empty()) return;
    if constexpr (std::is_same_v<T, bool>) {
      uint8_t b = 0;
      Get(&b);
      if (b > 1) Fail("a bool is not 0 or 1");
      *v = b == 1;
    } else if constexpr (std::is_enum_v<T>) {
      std::underlying_type_t<T> u{};
      Get(&u);
      *v = static_cast<T>(u);
    } else if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      if (!Need(sizeof(T))) return;
      U u = 0;
      for (size_t i = 0; i < sizeof(T); ++i) u |= U{static_cast<uint8_t>(in_[pos_ + i])} << (8 * i);
      pos_ += sizeof(T);
      *v = static_cast<T>(u);
    } else if constexpr (std::is_same_v<T, std::string>) {
      uint16_t n = 0;
      Get(&n);
      if (!Need(n)) return;
      v->assign(in_.substr(pos_, n));
      pos_ += n;
    } else if constexpr (IsOptional<T>::value) {
      uint8_t present = 0;
      Get(&present);
      if (present > 1) return Fail("an optional's presence byte is not 0 or 1");
      if (present == 1) {
        v->emplace();
        Get(&**v);
      } else {
        v->reset();
      }
    } else if constexpr (IsVector<T>::value) {
      uint16_t n = 0;
      Get(&n);
      if (!error_.empty()) return;
      v->clear();
      // Each element takes at least one byte: a count beyond the remaining bytes is truncated.
      if (!Need(n)) return;
      v->resize(n);
      for (auto& e : *v) Get(&e);
    } else {
      static_assert(WireStruct<T>, "no wire decoding for this type");
      std::apply([this](auto&... f) { (Get(&f), ...); }, v->WireTie());
    }
  }

  // OK when every field decoded and no byte is left over; otherwise kProtocolError naming
  // `what` (e.g. "follow request") and the offset.
  Status Finish(std::string_view what) const {
    if (error_.empty() && pos_ != in_.size()) {
      return Status(Code::kProtocolError,
                    std::string(what) + " body has " + std::to_string(in_.size() - pos_) +
                        " trailing bytes after offset " + std::to_string(pos_));
    }
    if (error_.empty()) return Status::OK();
    return Status(Code::kProtocolError, std::string(what) + " body: " + error_);
  }

 private:
  bool Need(size_t n) {
    if (in_.size() - pos_ >= n) return true;
    Fail("truncated, needs " + std::to_string(n) + " more bytes, has " +
         std::to_string(in_.size() - pos_));
    return false;
  }
  void Fail(const std::string& why) {
    if (error_.empty()) error_ = why + " at offset " + std::to_string(pos_);
  }

  std::string_view in_;
  size_t pos_ = 0;
  std::string error_;
};

// Decodes a whole body into *msg; `what` names it in errors.
template <typename T>
Status WireDecode(std::string_view body, T* msg, std::string_view what) {
  WireReader r(body);
  r.Get(msg);
  return r.Finish(what);
}

}  // namespace relgraph::net
