// JsonValue: a parsed JSON document, just enough for the HTTP JSON API's request bodies
// (docs/http.md), and the string escaping every JSON writer here shares.
//
// Why this design: Debian's Boost (1.74) predates Boost.JSON, and requests are small objects
// of numbers, strings, booleans and lists, so a strict recursive-descent reader of RFC 8259
// is a page of code. Numbers keep their text: a 64-bit id must not pass through a double.
// Strings decode escapes (\uXXXX, surrogate pairs) to UTF-8. Limits: nesting depth 32; the
// caller bounds the input's size (the HTTP port refuses bodies past 64 KiB).
//
// Thread-safety: plain values; the functions are pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/status.h"

namespace relgraph::net {

struct JsonMember;

struct JsonValue {
  enum class Kind : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  std::string text;              // a number's text as written, or a string's decoded bytes
  std::vector<JsonValue> items;  // kArray
  std::vector<JsonMember> members;  // kObject, in document order

  // The member named `name`, or nullptr (also for a value that is not an object).
  const JsonValue* Find(std::string_view name) const;
};

// One member of an object. (Not a std::pair: a pair of an incomplete JsonValue inside
// JsonValue does not compile with every standard library and compiler.)
struct JsonMember {
  JsonMember(std::string n, JsonValue v) : name(std::move(n)), value(std::move(v)) {}
  std::string name;
  JsonValue value;
};

// "null", "boolean", "number", "string", "array", "object".
std::string_view JsonKindName(JsonValue::Kind kind);

// Parses one JSON document (surrounding whitespace allowed). Errors: kInvalidArgument naming
// the byte offset and what was expected there ("JSON: at byte 12: expected ':'").
Result<JsonValue> ParseJson(std::string_view text);

// Appends `s` as a JSON string literal, quotes included: '"' and '\' escaped, control bytes as
// \u00XX; other bytes pass through (the engine's strings are UTF-8 or ASCII).
void AppendJsonString(std::string* out, std::string_view s);

}  // namespace relgraph::net
