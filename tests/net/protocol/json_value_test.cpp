// The JSON reader (net/protocol/json_value.h): documents it takes, documents it refuses with
// the offset named, escapes, and random bytes that never crash it.
#include "net/protocol/json_value.h"

#include <doctest.h>

#include <random>

namespace relgraph::net {
namespace {

TEST_CASE("json value: objects, arrays, numbers kept as text, strings decoded") {
  auto v = ParseJson(
      R"( {"a": [1, -2.5e3, true, false, null], "b": {"c": "x\"\\\/\n\u00e9\ud83d\ude00"}} )");
  REQUIRE(v.ok());
  REQUIRE(v->kind == JsonValue::Kind::kObject);
  const JsonValue* a = v->Find("a");
  REQUIRE(a != nullptr);
  REQUIRE(a->items.size() == 5);
  CHECK(a->items[0].text == "1");
  CHECK(a->items[1].text == "-2.5e3");
  CHECK((a->items[2].kind == JsonValue::Kind::kBool && a->items[2].boolean));
  CHECK((a->items[3].kind == JsonValue::Kind::kBool && !a->items[3].boolean));
  CHECK(a->items[4].kind == JsonValue::Kind::kNull);
  CHECK(v->Find("b")->Find("c")->text == "x\"\\/\n\xc3\xa9\xf0\x9f\x98\x80");
  CHECK(v->Find("zz") == nullptr);
  CHECK(ParseJson("18446744073709551615")->text == "18446744073709551615");
}

TEST_CASE("json value: malformed documents are refused at their offset") {
  const std::pair<const char*, const char*> bad[] = {
      {"", "JSON: at byte 0: expected a value, found the end"},
      {"{\"a\" 1}", "JSON: at byte 5: expected ':'"},
      {"[1,]", "JSON: at byte 3: unexpected character ']'"},
      {"01", "JSON: at byte 2: a number may not start with 0"},
      {"\"abc", "JSON: at byte 4: unterminated string"},
      {"\"\\q\"", "JSON: at byte 3: unknown escape '\\q'"},
      {"\"\\ud800\"", "JSON: at byte 7: a high surrogate without its low one"},
      {"{} x", "JSON: at byte 3: expected the end of the document"},
      {"tru", "JSON: at byte 0: unexpected character 't'"},
      {"1.", "JSON: at byte 2: expected a digit after '.'"},
  };
  for (const auto& [text, why] : bad) {
    auto v = ParseJson(text);
    CHECK_MESSAGE(!v.ok(), text);
    if (!v.ok()) CHECK(v.status().message() == why);
  }
  std::string deep(40, '[');
  CHECK(ParseJson(deep).status().message().find("nested deeper than 32") != std::string::npos);
}

TEST_CASE("json value: random bytes and cut documents never crash the reader") {
  std::mt19937_64 rng(11);
  const std::string good = R"({"user":2,"others":[1,2,"3"],"after":"17:4","x":{"y":null}})";
  for (int i = 0; i < 20000; ++i) {
    std::string s = good.substr(0, rng() % (good.size() + 1));
    for (int k = static_cast<int>(rng() % 4); k > 0 && !s.empty(); --k) {
      s[rng() % s.size()] = static_cast<char>(rng());
    }
    (void)ParseJson(s);
  }
  CHECK(ParseJson(good).ok());
}

TEST_CASE("json string: escapes quotes, backslashes and control bytes") {
  std::string out;
  AppendJsonString(&out, std::string("a\"b\\c\n\x01\xc3\xa9", 9));
  CHECK(out == "\"a\\\"b\\\\c\\u000a\\u0001\xc3\xa9\"");
  auto back = ParseJson(out);
  REQUIRE(back.ok());
  CHECK(back->text == std::string("a\"b\\c\n\x01\xc3\xa9", 9));
}

}  // namespace
}  // namespace relgraph::net
