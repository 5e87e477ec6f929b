// The JSON form of the wire structs (docs/http.md, "JSON form"): the HTTP JSON API reads
// requests and writes replies with it.
//
//   bool                 true / false
//   integers             numbers; when read, a string of digits too ("18446744073709551615",
//                        for languages whose numbers are doubles), checked against the range
//   RelationCode, ReplicationRole, EventKind, SubscribeFrom, DurabilityCode
//                        their names ("mutual", "primary", "follow", "now", "everysec")
//   string               a string
//   opt<T>               null (or a missing member) / T
//   list<T>              an array; when read, a string "1,2,3" too (a query string's form)
//   a cursor (WireCursor, PostCursor)
//                        the opaque string "TS:ID" the pages return as `next`
//   struct               an object whose members are the fields, named as RELGRAPH_WIRE_FIELDS
//                        lists them (the names of docs/protocol.md)
//
// When read, a missing member keeps the struct's default (0, false, empty, absent, or a
// documented default such as a page's limit 20); an unknown member or a value of the wrong
// type or range is an error naming the member.
//
// Why this design: the field lists the binary codec walks (wire_codec.h) carry their names,
// so JSON costs no second list per command: a new command is reachable over HTTP with its
// struct. Strings read leniently (numbers and lists as text) so that a query string
// (`?user=2&limit=10`) decodes through the same path as a JSON body.
//
// Thread-safety: pure functions.
#pragma once

#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "net/protocol/json_value.h"
#include "net/protocol/messages.h"

namespace relgraph::net {

// The names in a RELGRAPH_WIRE_FIELDS list, split ("a, b, c" -> a b c).
std::vector<std::string_view> SplitWireNames(std::string_view names);

template <typename T>
const std::vector<std::string_view>& WireFieldNames() {
  static const std::vector<std::string_view> names = SplitWireNames(T::WireNames());
  return names;
}

// ---- the enums with names ----
std::string_view ReplicationRoleName(ReplicationRole role);  // "primary", "replica"
std::string_view SubscribeFromName(SubscribeFrom from);      // "lsn", "now", "cursor"

template <typename E>
concept NamedEnum = std::is_same_v<E, RelationCode> || std::is_same_v<E, ReplicationRole> ||
    std::is_same_v<E, EventKind> || std::is_same_v<E, SubscribeFrom> ||
    std::is_same_v<E, DurabilityCode>;

template <NamedEnum E>
std::string_view JsonEnumName(E e) {
  if constexpr (std::is_same_v<E, RelationCode>) return RelationCodeName(e);
  if constexpr (std::is_same_v<E, ReplicationRole>) return ReplicationRoleName(e);
  if constexpr (std::is_same_v<E, EventKind>) return EventKindName(e);
  if constexpr (std::is_same_v<E, SubscribeFrom>) return SubscribeFromName(e);
  if constexpr (std::is_same_v<E, DurabilityCode>) {
    return DurabilityCodeName(static_cast<uint64_t>(e));
  }
}

template <typename T>
concept JsonCursor = std::is_same_v<T, WireCursor> || std::is_same_v<T, PostCursor>;

// "TS:ID" of a cursor; parsed back by ParseJsonCursor.
template <JsonCursor C>
std::string CursorText(const C& c) {
  if constexpr (std::is_same_v<C, WireCursor>) {
    return std::to_string(c.ts) + ":" + std::to_string(c.user);
  } else {
    return std::to_string(c.ts) + ":" + std::to_string(c.post);
  }
}
// Errors: kInvalidArgument ("not a cursor TS:ID").
Status ParseJsonCursor(std::string_view text, int64_t* ts, uint64_t* id);

// ---- writing ----

template <typename T>
void JsonPut(std::string* out, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    out->append(v ? "true" : "false");
  } else if constexpr (NamedEnum<T>) {
    AppendJsonString(out, JsonEnumName(v));
  } else if constexpr (std::is_enum_v<T>) {
    out->append(std::to_string(static_cast<std::underlying_type_t<T>>(v)));
  } else if constexpr (std::is_integral_v<T>) {
    out->append(std::to_string(v));
  } else if constexpr (std::is_same_v<T, std::string>) {
    AppendJsonString(out, v);
  } else if constexpr (JsonCursor<T>) {
    AppendJsonString(out, CursorText(v));
  } else if constexpr (IsOptional<T>::value) {
    if (v) {
      JsonPut(out, *v);
    } else {
      out->append("null");
    }
  } else if constexpr (IsVector<T>::value) {
    out->push_back('[');
    for (size_t i = 0; i < v.size(); ++i) {
      if (i > 0) out->push_back(',');
      JsonPut(out, v[i]);
    }
    out->push_back(']');
  } else {
    static_assert(WireStruct<T>, "no JSON form for this type");
    const auto& names = WireFieldNames<T>();
    out->push_back('{');
    size_t i = 0;
    std::apply(
        [&](const auto&... f) {
          ((out->append(i > 0 ? ",\"" : "\""), out->append(names[i++]), out->append("\":"),
            JsonPut(out, f)),
           ...);
        },
        v.WireTie());
    out->push_back('}');
  }
}

template <typename T>
std::string ToJson(const T& v) {
  std::string out;
  JsonPut(&out, v);
  return out;
}

// ---- reading ----

namespace json_internal {
template <typename T, bool = std::is_enum_v<T>>
struct IntegerOf {
  using type = T;
};
template <typename T>
struct IntegerOf<T, true> {
  using type = std::underlying_type_t<T>;
};
Status TypeError(std::string_view path, std::string_view expected, const JsonValue& got);
// The integer in a number or a string of digits, within [min, max].
Status ReadInteger(const JsonValue& v, std::string_view path, int64_t min, uint64_t max,
                   bool is_signed, int64_t* as_signed, uint64_t* as_unsigned);
// A named enum's value: its name, or its number.
template <NamedEnum E>
Status ReadEnum(const JsonValue& v, std::string_view path, E* out) {
  using U = std::underlying_type_t<E>;
  if (v.kind == JsonValue::Kind::kString) {
    for (unsigned u = 0; u <= std::numeric_limits<U>::max() && u < 256; ++u) {
      const E e = static_cast<E>(u);
      if (JsonEnumName(e) == v.text && JsonEnumName(e) != "unknown") {
        *out = e;
        return Status::OK();
      }
    }
    if (v.text.empty() || v.text[0] < '0' || v.text[0] > '9') {
      return Status::InvalidArgument(std::string(path) + ": unknown name \"" + v.text + "\"");
    }
  }
  int64_t s = 0;
  uint64_t u = 0;
  RELGRAPH_RETURN_IF_ERROR(ReadInteger(v, path, 0, std::numeric_limits<U>::max(), false, &s, &u));
  *out = static_cast<E>(u);
  return Status::OK();
}
// A list given as "1,2,3" (a query string's form): its items as strings.
JsonValue SplitListText(const JsonValue& v);
std::string MemberPath(std::string_view path, std::string_view name);
Status UnknownMember(std::string_view path, std::string_view name,
                     const std::vector<std::string_view>& known);
}  // namespace json_internal

// Reads `v` into *out; `path` names it in errors ("fans request", "fans request.after").
template <typename T>
Status JsonGet(const JsonValue& v, std::string_view path, T* out) {
  using K = JsonValue::Kind;
  if constexpr (std::is_same_v<T, bool>) {
    if (v.kind == K::kBool) {
      *out = v.boolean;
    } else if (v.kind == K::kString && (v.text == "true" || v.text == "false")) {
      *out = v.text == "true";
    } else {
      return json_internal::TypeError(path, "true or false", v);
    }
    return Status::OK();
  } else if constexpr (NamedEnum<T>) {
    return json_internal::ReadEnum(v, path, out);
  } else if constexpr (std::is_enum_v<T> || std::is_integral_v<T>) {
    using I = typename json_internal::IntegerOf<T>::type;
    int64_t s = 0;
    uint64_t u = 0;
    RELGRAPH_RETURN_IF_ERROR(json_internal::ReadInteger(
        v, path, static_cast<int64_t>(std::numeric_limits<I>::min()),
        static_cast<uint64_t>(std::numeric_limits<I>::max()), std::is_signed_v<I>, &s, &u));
    *out = static_cast<T>(std::is_signed_v<I> ? static_cast<I>(s) : static_cast<I>(u));
    return Status::OK();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (v.kind != K::kString) return json_internal::TypeError(path, "a string", v);
    *out = v.text;
    return Status::OK();
  } else if constexpr (JsonCursor<T>) {
    if (v.kind != K::kString) return json_internal::TypeError(path, "a cursor \"TS:ID\"", v);
    if constexpr (std::is_same_v<T, WireCursor>) {
      return ParseJsonCursor(v.text, &out->ts, &out->user);
    } else {
      return ParseJsonCursor(v.text, &out->ts, &out->post);
    }
  } else if constexpr (IsOptional<T>::value) {
    if (v.kind == K::kNull) {
      out->reset();
      return Status::OK();
    }
    out->emplace();
    return JsonGet(v, path, &**out);
  } else if constexpr (IsVector<T>::value) {
    const JsonValue split = v.kind == K::kString ? json_internal::SplitListText(v) : JsonValue{};
    const JsonValue& list = v.kind == K::kString ? split : v;
    if (list.kind != K::kArray) return json_internal::TypeError(path, "an array", v);
    if (list.items.size() > kMaxWireList) {
      return Status::InvalidArgument(std::string(path) + ": more than " +
                                     std::to_string(kMaxWireList) + " items");
    }
    out->assign(list.items.size(), {});
    for (size_t i = 0; i < list.items.size(); ++i) {
      RELGRAPH_RETURN_IF_ERROR(
          JsonGet(list.items[i], std::string(path) + "[" + std::to_string(i) + "]", &(*out)[i]));
    }
    return Status::OK();
  } else {
    static_assert(WireStruct<T>, "no JSON form for this type");
    if (v.kind != K::kObject) return json_internal::TypeError(path, "an object", v);
    const auto& names = WireFieldNames<T>();
    for (const auto& [name, member] : v.members) {
      bool known = false;
      for (std::string_view n : names) known = known || n == name;
      if (!known) return json_internal::UnknownMember(path, name, names);
    }
    Status status;
    size_t i = 0;
    std::apply(
        [&](auto&... f) {
          (
              [&](auto& field) {
                const std::string_view name = names[i++];
                if (!status.ok()) return;
                if (const JsonValue* m = v.Find(name); m != nullptr) {
                  status = JsonGet(*m, json_internal::MemberPath(path, name), &field);
                }
              }(f),
              ...);
        },
        out->WireTie());
    return status;
  }
}

}  // namespace relgraph::net
