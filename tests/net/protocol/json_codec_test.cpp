// The JSON form of the wire structs (net/protocol/json_codec.h): every request and reply of
// the command table, filled at random, goes to JSON and back to the same wire bytes; and the
// reading rules (defaults, strings for numbers and lists, ranges, unknown members) one by one.
#include "net/protocol/json_codec.h"

#include <doctest.h>

#include <random>

#include "net/protocol/command_table.h"
#include "net/protocol/json_reply.h"

namespace relgraph::net {
namespace {

template <typename T>
void Randomize(std::mt19937_64& rng, T* v) {
  if constexpr (std::is_same_v<T, bool>) {
    *v = rng() % 2 == 0;
  } else if constexpr (NamedEnum<T>) {
    for (;;) {  // a value with a name (the others have no JSON form to read back)
      *v = static_cast<T>(rng() % 32);
      if (JsonEnumName(*v) != "unknown") return;
    }
  } else if constexpr (std::is_enum_v<T>) {
    *v = static_cast<T>(rng());
  } else if constexpr (std::is_integral_v<T>) {
    // Edges of the range as often as the middle.
    switch (rng() % 4) {
      case 0:
        *v = std::numeric_limits<T>::min();
        break;
      case 1:
        *v = std::numeric_limits<T>::max();
        break;
      default:
        *v = static_cast<T>(rng());
    }
  } else if constexpr (std::is_same_v<T, std::string>) {
    v->clear();
    const size_t n = rng() % 12;
    for (size_t i = 0; i < n; ++i) {
      constexpr char kSome[] = "ab\"\\/\n\t\x01\x1f z\xc3\xa9";
      v->push_back(kSome[rng() % (sizeof kSome - 1)]);
    }
  } else if constexpr (IsOptional<T>::value) {
    if (rng() % 2 == 0) {
      v->reset();
    } else {
      v->emplace();
      Randomize(rng, &**v);
    }
  } else if constexpr (IsVector<T>::value) {
    v->resize(rng() % 5);
    for (auto& e : *v) Randomize(rng, &e);
  } else {
    std::apply([&](auto&... f) { (Randomize(rng, &f), ...); }, v->WireTie());
  }
}

template <typename T>
std::string Wire(const T& v) {
  std::string out;
  WirePut(&out, v);
  return out;
}

template <typename T>
void RoundTrips(std::mt19937_64& rng, std::string_view what) {
  for (int i = 0; i < 50; ++i) {
    T original;
    Randomize(rng, &original);
    const std::string json = ToJson(original);
    auto parsed = ParseJson(json);
    REQUIRE_MESSAGE(parsed.ok(), what << ": " << json << ": " << parsed.status().ToString());
    T back;
    const Status s = JsonGet(*parsed, what, &back);
    REQUIRE_MESSAGE(s.ok(), what << ": " << json << ": " << s.ToString());
    CHECK_MESSAGE(Wire(back) == Wire(original), what << ": " << json);
  }
}

TEST_CASE("json form: every request and reply of the table goes to JSON and back unchanged") {
  std::mt19937_64 rng(7);
  int rows = 0;
  ForEachCommand([&]<typename Row>() {
    if constexpr (Row::kDirection == Direction::kRequest) {
      RoundTrips<typename Row::Body>(rng, OpcodeName(Row::kOpcode));
      RoundTrips<typename Row::Body::Reply>(rng, OpcodeName(Row::kOpcode));
      ++rows;
    }
  });
  CHECK(rows >= 40);
  RoundTrips<EventsBody>(rng, "events");
}

TEST_CASE("json form: names, cursors and enums as documented") {
  PageReply page;
  page.entries.push_back(PageEntry{7, -3, RelationCode::kMutual, true});
  page.next = WireCursor{1700000000000, 7};
  CHECK(ToJson(page) ==
        "{\"entries\":[{\"user\":7,\"ts\":-3,\"viewer_relation\":\"mutual\",\"mutual\":true}],"
        "\"next\":\"1700000000000:7\"}");
  CHECK(ToJson(FollowRequest{1, 2, std::nullopt}) == "{\"follower\":1,\"followee\":2,\"ts\":null}");
  CHECK(ToJson(PositionReply{ReplicationRole::kReplica, 3, 9, 8}) ==
        "{\"role\":\"replica\",\"epoch\":3,\"applied_lsn\":9,\"durable_lsn\":8}");
  CHECK(ToJson(Empty{}) == "{}");
}

Status Read(std::string_view json, auto* out) {
  auto v = ParseJson(json);
  if (!v.ok()) return v.status();
  return JsonGet(*v, "req", out);
}

TEST_CASE("json form: reading keeps defaults, takes strings, checks ranges and members") {
  FansRequest fans;
  REQUIRE(Read(R"({"user": 2})", &fans).ok());
  CHECK(fans.user == 2);
  CHECK(fans.limit == 20);  // the struct's default
  CHECK(!fans.after);
  REQUIRE(Read(R"({"user":"18446744073709551615","limit":"5","after":"17:4","viewer":null})", &fans)
              .ok());
  CHECK(fans.user == ~uint64_t{0});
  CHECK(fans.limit == 5);
  CHECK((fans.after && fans.after->ts == 17 && fans.after->user == 4));

  const Status range = Read(R"({"user":2,"limit":70000})", &fans);
  CHECK(range.code() == Code::kInvalidArgument);
  CHECK(range.message() == "req.limit: 70000 is out of range (0..65535)");
  CHECK(Read(R"({"user":-1})", &fans).message() ==
        "req.user: -1 is out of range (0..18446744073709551615)");
  CHECK(Read(R"({"user":1.5})", &fans).message() ==
        "req.user: expected an integer 0..18446744073709551615, got number 1.5");
  CHECK(Read(R"({"user":2,"color":1})", &fans).message() ==
        "req: unknown member \"color\" (its members: user, limit, offset, after, viewer)");
  CHECK(Read(R"({"user":2,"after":"17"})", &fans).message().find("not a cursor TS:ID") !=
        std::string::npos);
  CHECK(Read(R"([1])", &fans).message() == "req: expected an object, got array");

  RelationsRequest rel;
  REQUIRE(Read(R"({"a":1,"others":"2,3,4"})", &rel).ok());  // a query string's list
  CHECK(rel.others == std::vector<uint64_t>{2, 3, 4});
  CHECK(Read(R"({"a":1,"others":[2,"x"]})", &rel).message() ==
        "req.others[1]: expected an integer 0..18446744073709551615, got string \"x\"");

  FollowRequest follow;
  REQUIRE(Read(R"({"follower":1,"followee":2,"ts":-5})", &follow).ok());
  CHECK(follow.ts == -5);
  SetPrivateRequest priv;
  REQUIRE(Read(R"({"user":1,"is_private":"true"})", &priv).ok());
  CHECK(priv.is_private);
  CHECK(Read(R"({"user":1,"is_private":1})", &priv).message() ==
        "req.is_private: expected true or false, got number 1");
  SubscribeRequest sub;
  REQUIRE(Read(R"({"from":"cursor","name":"c"})", &sub).ok());
  CHECK(sub.from == SubscribeFrom::kCursor);
  CHECK(Read(R"({"from":"later"})", &sub).message() == "req.from: unknown name \"later\"");
}

TEST_CASE("reply json: the shapes relgraph-cli --json prints") {
  RelationsRequest rel{1, {5, 9}};
  CHECK(ReplyJson(rel, RelationsReply{{RelationCode::kFollowing, RelationCode::kNone}}) ==
        R"({"5":"following","9":"none"})");
  CHECK(
      ReplyJson(BlockRequest{}, BlockReply{true, 12, 5}) ==
      R"({"created":true,"ts":12,"unfollowed":true,"lost_follower":false,"dropped_request":true})");
  CHECK(ReplyJson(PingRequest{}, Empty{}) == R"({"pong":true})");
  InfoReply info;
  info.fields = {
      {"users", 3}, {"durability", 1}, {"server_version", (uint64_t{1} << 32) | (2 << 16) | 3}};
  CHECK(ReplyJson(InfoRequest{}, info) ==
        R"({"users":3,"durability":"everysec","server_version":"1.2.3"})");
  CHECK(ReplyJson(CountsRequest{}, CountsReply{1, 2, 3}) ==
        R"({"following":1,"fans":2,"friends":3})");
}

}  // namespace
}  // namespace relgraph::net
