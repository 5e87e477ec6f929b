// Why this design: the command table names each opcode's request struct and the wire codec
// walks any struct's fields, so one generic printer renders every request: a new command needs
// nothing here. It stops appending once the cap is reached, so a RELATIONS of 1,000 ids costs
// the cap, not the list.
#include "net/protocol/request_text.h"

#include <cstdio>
#include <tuple>
#include <type_traits>

#include "net/protocol/command_table.h"

namespace relgraph::net {
namespace {

constexpr std::string_view kCut = "...";

class Text {
 public:
  explicit Text(size_t max) : max_(max < kCut.size() ? kCut.size() : max) {}
  bool full() const { return full_; }
  void Add(std::string_view s) {
    if (full_) return;
    if (out_.size() + s.size() <= max_) {
      out_.append(s);
      return;
    }
    full_ = true;
    out_.append(s.substr(0, max_ - out_.size()));
    out_.resize(max_ - kCut.size());
    out_.append(kCut);
  }
  std::string Take() { return std::move(out_); }

 private:
  const size_t max_;
  std::string out_;
  bool full_ = false;
};

template <typename T>
void PutFields(Text& t, const T& v);

template <typename T>
void Put(Text& t, const T& v) {
  if (t.full()) return;
  if constexpr (std::is_same_v<T, bool>) {
    t.Add(v ? "true" : "false");
  } else if constexpr (std::is_enum_v<T>) {
    Put(t, static_cast<std::underlying_type_t<T>>(v));
  } else if constexpr (std::is_integral_v<T>) {
    t.Add(std::to_string(v));
  } else if constexpr (std::is_same_v<T, std::string>) {
    t.Add("\"");
    for (unsigned char c : v) {
      if (t.full()) return;
      if (c == '"' || c == '\\') {
        const char esc[] = {'\\', static_cast<char>(c)};
        t.Add(std::string_view(esc, 2));
      } else if (c < 0x20 || c >= 0x7f) {
        char hex[5];
        std::snprintf(hex, sizeof hex, "\\x%02x", c);
        t.Add(hex);
      } else {
        const char one = static_cast<char>(c);
        t.Add(std::string_view(&one, 1));
      }
    }
    t.Add("\"");
  } else if constexpr (IsOptional<T>::value) {
    if (v) {
      Put(t, *v);
    } else {
      t.Add("-");
    }
  } else if constexpr (IsVector<T>::value) {
    t.Add("[");
    for (size_t i = 0; i < v.size() && !t.full(); ++i) {
      if (i > 0) t.Add(",");
      Put(t, v[i]);
    }
    t.Add("]");
  } else {
    static_assert(WireStruct<T>, "no text for this type");
    t.Add("{");
    PutFields(t, v);
    t.Add("}");
  }
}

// A struct's fields, space-separated (a request's top level has no braces).
template <typename T>
void PutFields(Text& t, const T& v) {
  bool first = true;
  std::apply(
      [&](const auto&... f) { ((first ? void(first = false) : t.Add(" "), Put(t, f)), ...); },
      v.WireTie());
}

std::string Opaque(std::string_view body) {
  return "<" + std::to_string(body.size()) + " bytes>";
}

}  // namespace

std::string RequestText(uint8_t opcode, std::string_view body, size_t max_bytes) {
  Text text(max_bytes);
  bool found = false;
  bool decoded = false;
  ForEachCommand([&]<typename Row>() {
    if constexpr (Row::kDirection == Direction::kRequest) {
      if (found || static_cast<uint8_t>(Row::kOpcode) != opcode) return;
      found = true;
      typename Row::Body request;
      if (!WireDecode(body, &request, "").ok()) return;
      decoded = true;
      if constexpr (std::is_same_v<typename Row::Body, HelloRequest>) {
        Put(text, request.version);  // never the token
      } else {
        PutFields(text, request);
      }
    }
  });
  if (!decoded) {
    Text opaque(max_bytes);
    opaque.Add(Opaque(body));
    return opaque.Take();
  }
  return text.Take();
}

}  // namespace relgraph::net
