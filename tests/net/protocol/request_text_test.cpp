// A request as the slow log shows it: every field in wire order, strings escaped, the cap,
// HELLO's token never shown, bodies that do not decode.
#include "net/protocol/request_text.h"

#include <doctest.h>

#include "net/protocol/command_table.h"
#include "net/protocol/messages.h"

namespace relgraph::net {
namespace {

template <typename Req>
std::string TextOf(const Req& r, size_t max = kRequestTextMax) {
  std::string body;
  WirePut(&body, r);
  return RequestText(static_cast<uint8_t>(Req::kOpcode), body, max);
}

TEST_CASE("request text: fields in wire order, optionals, lists and nested structs") {
  CHECK(TextOf(FollowRequest{1, 2, int64_t{1700000000000}}) == "1 2 1700000000000");
  CHECK(TextOf(FollowRequest{1, 2, std::nullopt}) == "1 2 -");
  CHECK(TextOf(RelationsRequest{7, {2, 3, 4}}) == "7 [2,3,4]");
  FansRequest page;
  page.user = 5;
  page.limit = 20;
  page.after = WireCursor{1000, 9};
  CHECK(TextOf(page) == "5 20 0 {1000 9} -");
  CHECK(TextOf(PromoteRequest{true}) == "true");
  CHECK(TextOf(PingRequest{}) == "");
  CHECK(TextOf(SlowlogRequest{10, false}) == "10 false");
}

TEST_CASE("request text: strings are quoted with their odd bytes escaped") {
  CHECK(TextOf(DeleteCursorRequest{"a\"b\\c\n\xff"}) == R"("a\"b\\c\x0a\xff")");
}

TEST_CASE("request text: HELLO shows its version, never its token") {
  const std::string text = TextOf(HelloRequest{2, "secret-token"});
  CHECK(text == "2");
}

TEST_CASE("request text: at most the cap, cut with an ellipsis, a long list cut early") {
  std::vector<uint64_t> many(1000);
  for (size_t i = 0; i < many.size(); ++i) many[i] = 1'000'000 + i;
  const std::string text = TextOf(RelationsRequest{1, many});
  CHECK(text.size() == kRequestTextMax);
  CHECK(text.substr(0, 19) == "1 [1000000,1000001,");
  CHECK(text.substr(text.size() - 3) == "...");
  CHECK(TextOf(FollowRequest{123456, 2, std::nullopt}, 8) == "12345...");
  CHECK(TextOf(FollowRequest{1, 2, std::nullopt}, 5) == "1 2 -");  // exactly the cap: whole
}

TEST_CASE("request text: a body that is not its request, and an opcode that is none") {
  CHECK(RequestText(static_cast<uint8_t>(Opcode::kFollow), "abc") == "<3 bytes>");
  CHECK(RequestText(0x99, "abcd") == "<4 bytes>");
  CHECK(RequestText(static_cast<uint8_t>(Opcode::kEvents), "") == "<0 bytes>");  // a push
}

TEST_CASE("request text: every request of the command table renders its default") {
  ForEachCommand([&]<typename Row>() {
    if constexpr (Row::kDirection == Direction::kRequest) {
      typename Row::Body request;
      INFO(OpcodeName(Row::kOpcode));
      const std::string text = TextOf(request);
      CHECK(text.find('<') == std::string::npos);  // it decoded
      CHECK(text.size() <= kRequestTextMax);
    }
  });
}

}  // namespace
}  // namespace relgraph::net
