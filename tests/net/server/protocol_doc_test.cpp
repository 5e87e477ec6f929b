// docs/protocol.md against a real server: the examples table is a scripted session whose every
// request and reply must match the server byte for byte, and each rule the document states
// (bodies, opcode 0, unknown opcodes, cursor times, the end of a list, per-command errors,
// HELLO tokens) is exercised here.
//
// To regenerate the examples table after a deliberate change of the protocol:
//   RELGRAPH_PRINT_PROTOCOL_EXAMPLES=1 build/tests/net_server_protocol_doc_test
// and paste the rows it prints into the document.
#include <doctest.h>
#include <poll.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "engine/graph/clock.h"
#include "net/protocol/frame.h"
#include "net/protocol/request_text.h"
#include "tests/net/server/server_test_util.h"
#include "tests/storage/test_dir.h"

namespace relgraph::net {
namespace {

using testing::TestServer;

using testing::Frame;
using testing::HelloFrame;
using testing::RequestFrame;

std::string Hex(std::string_view bytes) {
  std::string out;
  char buf[4];
  for (unsigned char c : bytes) {
    std::snprintf(buf, sizeof buf, "%02x ", c);
    out += buf;
  }
  if (!out.empty()) out.pop_back();
  return out;
}

// A raw connection: whole frames out, whole frames in.
class Raw {
 public:
  explicit Raw(const TestServer& server) : fd_(server.RawSocket()) {}
  ~Raw() { ::close(fd_); }
  void Send(std::string_view bytes) {
    REQUIRE(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == ssize_t(bytes.size()));
  }
  // The next frame, or "" when the server closed first (or 5 s passed).
  std::string Next() {
    for (;;) {
      const DecodeResult r = DecodeFrame(in_, kDefaultMaxFrame);
      if (r.state == DecodeState::kFrame) {
        std::string frame = in_.substr(0, r.frame.size);
        in_.erase(0, r.frame.size);
        return frame;
      }
      REQUIRE(r.state == DecodeState::kNeedMore);
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 5000) <= 0) return "";
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return "";
      in_.append(buf, size_t(n));
    }
  }
  std::string Exchange(std::string_view request) {
    Send(request);
    return Next();
  }
  Status StatusOf(std::string_view request) {
    const std::string reply = Exchange(request);
    REQUIRE(!reply.empty());
    return StatusFromReply(DecodeFrame(reply, kDefaultMaxFrame).frame);
  }
  bool ClosedByPeer() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) return false;
    char c;
    return ::recv(fd_, &c, 1, 0) == 0;
  }

 private:
  int fd_;
  std::string in_;
};

struct Example {
  std::string what;
  std::string request;
  bool reply_varies = false;  // only the reply's header is fixed (times, sizes, counters)
};

constexpr int64_t kT0 = 1'700'000'000'000;  // 2023-11-14T22:13:20Z

// The session of the document's examples table, in order.
std::vector<Example> Session() {
  uint32_t id = 0;
  std::vector<Example> s;
  auto add = [&](std::string what, const auto& request, bool varies = false) {
    s.push_back({std::move(what), RequestFrame(++id, request), varies});
  };
  add("HELLO, token \"secret\" (ignored: this server has no --auth-token)",
      HelloRequest{kProtocolVersion, "secret"});
  s.push_back({"PING", Frame(++id, Opcode::kPing, ""), false});
  add("FOLLOW 1 → 2 at T0 = 1700000000000", FollowRequest{1, 2, kT0});
  add("FOLLOW 2 → 1 at T0 + 1000: now mutual", FollowRequest{2, 1, kT0 + 1000});
  add("FOLLOW 1 → 3 at T0 + 2000", FollowRequest{1, 3, kT0 + 2000});
  add("FOLLOW 3 → 2 at T0 + 3000", FollowRequest{3, 2, kT0 + 3000});
  add("FOLLOW 1 → 2 again: not created, the original time", FollowRequest{1, 2, kT0 + 9000});
  add("RELATION 1, 2", RelationRequest{1, 2});
  add("RELATIONS 1 against [2, 3, 4]", RelationsRequest{1, {2, 3, 4}});
  {
    FollowingRequest q;
    q.user = 1;
    q.limit = 20;
    q.viewer = 2;
    add("FOLLOWING of 1, limit 20, viewer 2: [3 (viewer: relation(2, 3) = followed_by, as 3 "
        "follows 2), 2 (viewer: relation(2, 2) = none)], no next",
        q);
  }
  {
    FollowingRequest q;
    q.user = 1;
    q.limit = 1;
    add("FOLLOWING of 1, limit 1: [3], next = (T0 + 2000, 3)", q);
    q.after = WireCursor{kT0 + 2000, 3};
    add("FOLLOWING of 1 after (T0 + 2000, 3), limit 1: [2]; it ends the list, so no next", q);
  }
  add("COUNTS of 1", CountsRequest{1});
  add("KNOWN_FOLLOWERS viewer 1, target 2, limit 3: whom 1 follows that follow 2",
      KnownFollowersRequest{1, 2, 3});
  add("UNFOLLOW 1 → 3", UnfollowRequest{1, 3});
  add("PUBLISH author 2, post 500, kind 0, at T0 + 5000", PublishRequest{2, 500, 0, kT0 + 5000});
  {
    TimelineRequest q;
    q.user = 1;
    q.limit = 10;
    add("TIMELINE of 1, limit 10, every kind", q);
  }
  add("MUTE 1, 2", MuteRequest{{1, 2}});
  add("DELETE_POST author 2, post 500 (its reply has no body)", DeletePostRequest{2, 500});
  add("FOLLOW 1 → 1: error self_follow", FollowRequest{1, 1, std::nullopt});
  add("SNAPSHOT (reply: lsn, edges, file_bytes, created_ms; the last two vary)", SnapshotRequest{},
      true);
  add("REMOVE_USER 2", RemoveUserRequest{2});
  // Blocks, private accounts and requests; the server's clock reads T0 + 10000 throughout.
  add("SET_PRIVATE 3 on, at the clock's T0 + 10000", SetPrivateRequest{3, true});
  add("IS_PRIVATE 3", IsPrivateRequest{3});
  add("FOLLOW 1 → 3 at T0 + 6000: 3 is private, so a request (relation requested)",
      FollowRequest{1, 3, kT0 + 6000});
  add("FOLLOW 4 → 3 at T0 + 7000: another request", FollowRequest{4, 3, kT0 + 7000});
  {
    RequestsRequest q;
    q.user = 3;
    q.limit = 10;
    q.viewer = 1;
    add("REQUESTS of 3, limit 10, viewer 1: total 2, [4 (viewer: none), 1 (viewer: relation(1, "
        "1) = none)]",
        q);
  }
  add("WITHDRAW 4 → 3", WithdrawRequest{{4, 3}});
  add("APPROVE: 3 accepts 1; the edge 1 → 3 at T0 + 10000", ApproveRequest{{3, 1}});
  add("BLOCK 3 blocks 1: removed bit 1 (1 → 3 went)", BlockRequest{3, 1});
  add("FOLLOW 1 → 3: error blocked", FollowRequest{1, 3, std::nullopt});
  add("RELATIONS 1 against [3]: blocked_by", RelationsRequest{1, {3}});
  {
    BlocksRequest q;
    q.user = 3;
    q.limit = 10;
    add("BLOCKS of 3, limit 10: total 1, [1 at T0 + 10000]", q);
  }
  add("UNBLOCK 3, 1", UnblockRequest{{3, 1}});
  add("REJECT: 3 refuses 4, who withdrew already", RejectRequest{{3, 4}});
  add("SET_PRIVATE 3 off: nothing pending, nothing approved", SetPrivateRequest{3, false});
  add("SET_PRIVATE 3 off again: no change, so changed false and ts 0", SetPrivateRequest{3, false});
  return s;
}

// The rows of the first table under "## Examples", which ends at its first line that is not a
// row: {request hex, reply hex, reply marked as varying}.
struct DocRow {
  std::string request, reply;
  bool varies = false;
};
std::vector<DocRow> DocExamples() {
  std::ifstream in(std::string(RELGRAPH_DOCS_DIR) + "/protocol.md");
  REQUIRE_MESSAGE(in.good(), "cannot read docs/protocol.md");
  std::vector<DocRow> rows;
  bool in_section = false, in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## Examples";
    if (!in_section) continue;
    if (line.rfind("|", 0) != 0) {
      if (in_table) break;  // the first table ends at its first line that is not a row
      continue;
    }
    in_table = true;
    std::vector<std::string> ticks;  // the backticked parts, in order
    for (size_t at = line.find('`'); at != std::string::npos; at = line.find('`', at + 1)) {
      const size_t end = line.find('`', at + 1);
      ticks.push_back(line.substr(at + 1, end - at - 1));
      at = end;
    }
    if (ticks.size() < 2) continue;  // the header and notes
    rows.push_back(
        {ticks[ticks.size() - 2], ticks.back(), line.find("varies") != std::string::npos});
  }
  return rows;
}

TEST_CASE("protocol.md: the examples table is a session the server answers byte for byte") {
  testing::TestDir dir;
  ManualClock clock(kT0 + 10000);  // the time of blocks, approvals and privacy changes
  DbOptions db_options = TestServer::NoRateLimit();
  db_options.graph.clock = &clock;
  ServerOptions server_options;
  server_options.server_version = "0.1.0";  // the document's, whatever this build's version
  TestServer server(server_options, dir.path(), db_options);
  Raw raw(server);
  const std::vector<Example> session = Session();
  std::vector<std::string> replies;
  for (const Example& e : session) {
    replies.push_back(raw.Exchange(e.request));
    REQUIRE_MESSAGE(!replies.back().empty(), "no reply to ", e.what);
  }
  if (std::getenv("RELGRAPH_PRINT_PROTOCOL_EXAMPLES")) {
    for (size_t i = 0; i < session.size(); ++i) {
      const std::string reply =
          session[i].reply_varies ? Hex(replies[i].substr(0, kFrameHeaderBytes)) : Hex(replies[i]);
      std::printf("| %s | `%s` | %s`%s` |\n", session[i].what.c_str(),
                  Hex(session[i].request).c_str(), session[i].reply_varies ? "varies: " : "",
                  reply.c_str());
    }
  }
  const std::vector<DocRow> doc = DocExamples();
  REQUIRE(doc.size() == session.size());
  for (size_t i = 0; i < session.size(); ++i) {
    CAPTURE(session[i].what);
    CHECK(doc[i].request == Hex(session[i].request));
    CHECK(doc[i].varies == session[i].reply_varies);
    if (session[i].reply_varies) {
      CHECK(doc[i].reply == Hex(replies[i].substr(0, kFrameHeaderBytes)));
    } else {
      CHECK(doc[i].reply == Hex(replies[i]));
    }
  }
}

// The rows of the first table under `heading` ("## Stream example"): {what, bytes}.
std::vector<std::pair<std::string, std::string>> FrameTableRows(const std::string& heading) {
  std::ifstream in(std::string(RELGRAPH_DOCS_DIR) + "/protocol.md");
  REQUIRE_MESSAGE(in.good(), "cannot read docs/protocol.md");
  std::vector<std::pair<std::string, std::string>> rows;
  bool in_section = false, in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_section = line == heading;
    if (!in_section) continue;
    if (line.rfind("|", 0) != 0) {
      if (in_table) break;  // a blank line ends a markdown table: rows after it are not in it
      continue;
    }
    in_table = true;
    const size_t tick = line.find('`');
    if (tick == std::string::npos) continue;  // the header and its rule
    const size_t end = line.find('`', tick + 1);
    rows.push_back({line.substr(2, line.find(" |") - 2), line.substr(tick + 1, end - tick - 1)});
  }
  return rows;
}

TEST_CASE("protocol.md: the stream example is what a subscriber sends and gets, byte for byte") {
  testing::TestDir dir;
  TestServer server({}, dir.path());
  Raw writer(server);
  writer.Exchange(HelloFrame());
  writer.Exchange(RequestFrame(2, FollowRequest{1, 2, kT0}));
  writer.Exchange(RequestFrame(3, FollowRequest{2, 1, kT0 + 1000}));
  writer.Exchange(RequestFrame(4, PublishRequest{2, 500, 3, kT0 + 5000}));

  Raw sub(server);
  sub.Exchange(HelloFrame());
  std::vector<std::pair<std::string, std::string>> frames;
  const std::string subscribe = RequestFrame(2, SubscribeRequest{SubscribeFrom::kLsn, 1, 0, ""});
  frames.push_back({"SUBSCRIBE from LSN 1, every kind", subscribe});
  frames.push_back({"its reply: first_lsn 1, newest_lsn 3", sub.Exchange(subscribe)});
  frames.push_back(
      {"EVENTS: next_lsn 4; follow 1 → 2 at T0; follow 2 → 1 at T0 + 1000, friends; "
       "publish 2, post 500, kind 3 at T0 + 5000",
       sub.Next()});
  const std::string again = RequestFrame(3, SubscribeRequest{SubscribeFrom::kNow, 0, 0, ""});
  frames.push_back({"SUBSCRIBE again on that connection", again});
  frames.push_back({"its reply: invalid_argument", sub.Exchange(again)});

  if (std::getenv("RELGRAPH_PRINT_PROTOCOL_EXAMPLES")) {
    for (const auto& [what, bytes] : frames) {
      std::printf("| %s | `%s` |\n", what.c_str(), Hex(bytes).c_str());
    }
  }
  const auto doc = FrameTableRows("## Stream example");
  REQUIRE(doc.size() == frames.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    CAPTURE(frames[i].first);
    CHECK(doc[i].first == frames[i].first);
    CHECK(doc[i].second == Hex(frames[i].second));
  }
}

TEST_CASE("protocol.md: the slow-command log's example is the codec's, and a server's answer") {
  const auto doc = FrameTableRows("## Slow-command log");
  REQUIRE(doc.size() == 4);
  // The first two against the encoder and the decoder.
  CHECK(doc[0].second == Hex(RequestFrame(1, SlowlogRequest{10, false})));
  SlowlogReply reply{10000, 128, {{7, kT0, 12345, "follow", "1 2 -", "127.0.0.1:50000"}}};
  std::string frame;
  const size_t start = BeginFrame(&frame, 1, static_cast<uint8_t>(Opcode::kSlowlog), 0);
  WirePut(&frame, reply);
  EndFrame(&frame, start);
  CHECK(doc[1].second == Hex(frame));
  SlowlogReply decoded;
  REQUIRE(WireDecode(std::string_view(frame).substr(kFrameHeaderBytes), &decoded, "").ok());
  REQUIRE(decoded.entries.size() == 1);
  CHECK(decoded.entries[0] == reply.entries[0]);
  // The entry's args are what the slow log renders for that FOLLOW.
  std::string follow;
  WirePut(&follow, FollowRequest{1, 2, std::nullopt});
  CHECK(RequestText(static_cast<uint8_t>(Opcode::kFollow), follow) == "1 2 -");
  // The last two against a fresh server with the defaults.
  TestServer server;
  Raw raw(server);
  raw.Exchange(HelloFrame());
  const std::string request = RequestFrame(2, SlowlogRequest{0, true});
  CHECK(doc[2].second == Hex(request));
  CHECK(doc[3].second == Hex(raw.Exchange(request)));
}

TEST_CASE("protocol.md: the notice example is what the server sends an idle connection") {
  std::string notice;
  AppendErrorFrame(&notice, 0, static_cast<uint8_t>(Opcode::kNotice),
                   Status(Code::kResourceExhausted, "idle for more than 300000 ms"));
  std::ifstream in(std::string(RELGRAPH_DOCS_DIR) + "/protocol.md");
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str().find("`" + Hex(notice) + "`") != std::string::npos);

  ServerOptions options;
  options.idle_timeout = std::chrono::milliseconds(300);
  TestServer server(options);
  Raw raw(server);
  raw.Exchange(HelloFrame());
  const std::string got = raw.Next();
  AppendErrorFrame(&notice, 0, 0, Status(Code::kResourceExhausted, "idle for more than 300 ms"));
  CHECK(Hex(got) == Hex(notice.substr(notice.size() - got.size())));
}

TEST_CASE("protocol.md: a body holds exactly its fields, PING's included") {
  TestServer server;
  Raw raw(server);
  raw.Exchange(HelloFrame());
  for (Opcode op : {Opcode::kPing, Opcode::kInfo, Opcode::kSnapshot}) {
    CAPTURE(OpcodeName(op));
    for (size_t n : {size_t{1}, size_t{4096}}) {
      CHECK(raw.StatusOf(Frame(2, op, std::string(n, 'x'))).code() == Code::kProtocolError);
    }
  }
  CHECK(raw.StatusOf(Frame(3, Opcode::kPing, "")).ok());  // the connection stays usable
}

TEST_CASE("protocol.md: an unknown opcode is unsupported and the connection stays usable") {
  TestServer server;
  Raw raw(server);
  raw.Exchange(HelloFrame());
  for (uint8_t op : {0x05, 0x1a, 0x7f, 0xff}) {
    CAPTURE(int(op));
    CHECK(raw.StatusOf(Frame(9, static_cast<Opcode>(op), "")).code() == Code::kUnsupported);
  }
  CHECK(raw.StatusOf(Frame(3, Opcode::kPing, "")).ok());
}

TEST_CASE("protocol.md: a request with opcode 0 gets a NOTICE and the connection closes") {
  TestServer server;
  for (uint32_t id : {0u, 7u}) {
    Raw raw(server);
    raw.Exchange(HelloFrame());
    const std::string notice = raw.Exchange(Frame(id, Opcode::kNotice, ""));
    REQUIRE(!notice.empty());
    const DecodeResult r = DecodeFrame(notice, kDefaultMaxFrame);
    CHECK(r.frame.request_id == 0);
    CHECK(r.frame.opcode == 0);
    CHECK(StatusFromReply(r.frame).code() == Code::kProtocolError);
    CHECK(raw.ClosedByPeer());
  }
}

TEST_CASE("protocol.md: HELLO's token is ignored without --auth-token, whatever its bytes") {
  TestServer server;
  for (const std::string& token : {std::string("anything"), std::string("\xff\xfe\x00\x80", 4)}) {
    Raw raw(server);
    CHECK(raw.StatusOf(HelloFrame(1, token)).ok());
    CHECK(raw.StatusOf(Frame(2, Opcode::kPing, "")).ok());
  }
}

TEST_CASE("protocol.md: every list takes a cursor time in [0, 2^42 - 1] and no other") {
  TestServer server;
  auto c = server.Connect();
  REQUIRE(c->Follow(1, 2).ok());
  REQUIRE(c->Publish(2, 9, 0).ok());
  for (int64_t ts : {int64_t{-1}, kMaxTimestampMs + 1, INT64_MAX, kMaxTimestampMs, int64_t{0}}) {
    CAPTURE(ts);
    const Code want = ts < 0 || ts > kMaxTimestampMs ? Code::kInvalidArgument : Code::kOk;
    PageQuery q;
    q.user = 1;
    q.after = WireCursor{ts, 1};
    CHECK(c->Following(q).status().code() == want);
    CHECK(c->Fans(q).status().code() == want);
    CHECK(c->Friends(q).status().code() == want);
    FeedQuery f;
    f.user = 1;
    f.after = PostCursor{ts, 1};
    CHECK(c->Timeline(f).status().code() == want);
    CHECK(c->UserPosts(f).status().code() == want);
    if (want != Code::kOk) {
      CHECK(c->Following(q).status().message().find("cursor time") != std::string::npos);
    }
  }
}

TEST_CASE("protocol.md: a page carries next exactly when more entries follow") {
  TestServer server;
  auto c = server.Connect();
  for (uint64_t b = 2; b <= 4; ++b) REQUIRE(c->Follow(1, b, kT0 + int64_t(b)).ok());
  for (uint64_t p = 1; p <= 3; ++p) {
    REQUIRE(c->Publish(1, p, 0, kT0 + int64_t(p)).ok());
  }
  for (uint16_t limit = 1; limit <= 4; ++limit) {
    CAPTURE(limit);
    PageQuery q;
    q.user = 1;
    q.limit = limit;
    auto page = c->Following(q);
    REQUIRE(page.ok());
    CHECK(page->next.has_value() == (limit < 3));
    FeedQuery f;
    f.user = 1;
    f.limit = limit;
    auto posts = c->UserPosts(f);
    REQUIRE(posts.ok());
    CHECK(posts->next.has_value() == (limit < 3));
  }
}

TEST_CASE("protocol.md: the per-command error cases it lists") {
  TestServer server;
  auto c = server.Connect();
  REQUIRE(c->Follow(1, 2).ok());
  REQUIRE(c->Follow(2, 1).ok());
  REQUIRE(c->Follow(1, 3).ok());
  const auto code = [](const auto& r) { return r.status().code(); };
  CHECK(c->DeletePost(0, 5).code() == Code::kInvalidUserId);
  CHECK(c->DeletePost(1, 0).code() == Code::kInvalidArgument);
  CHECK(c->DeletePost(1, 5).code() == Code::kNotFound);
  CHECK(code(c->Publish(1, 0, 0)) == Code::kInvalidArgument);
  CHECK(code(c->Publish(0, 5, 0)) == Code::kInvalidUserId);
  CHECK(code(c->Mute(0, 2, true)) == Code::kInvalidUserId);
  CHECK(code(c->Hide(0, 2, true)) == Code::kInvalidUserId);
  FeedQuery f;
  CHECK(code(c->Timeline(f)) == Code::kInvalidUserId);  // user 0
  PageQuery q;
  q.user = 1;
  q.viewer = 0;
  CHECK(code(c->Following(q)) == Code::kInvalidUserId);
  auto self = c->Unfollow(1, 1);
  REQUIRE(self.ok());  // no such edge: not an error
  CHECK_FALSE(*self);
  auto friends = c->KnownFollowers(1, 1, 10);
  REQUIRE(friends.ok());  // whom 1 follows that follow 1: its friends
  CHECK(friends->total == 1);
  CHECK(friends->users == std::vector<uint64_t>{2});
}

TEST_CASE("protocol.md: an id 0 is invalid_user_id in every command that takes a user") {
  TestServer server;
  auto c = server.Connect();
  const uint64_t one[] = {1};
  const uint64_t zero[] = {0};
  PageQuery page;
  FeedQuery feed;
  const Code want = Code::kInvalidUserId;
  CHECK(c->Follow(0, 1).status().code() == want);
  CHECK(c->Follow(1, 0).status().code() == want);
  CHECK(c->Unfollow(0, 1).status().code() == want);
  CHECK(c->Relation(0, 1).status().code() == want);
  CHECK(c->Relation(1, 0).status().code() == want);
  CHECK(c->Relations(0, one).status().code() == want);
  CHECK(c->Relations(1, zero).status().code() == want);
  CHECK(c->Following(page).status().code() == want);
  CHECK(c->Fans(page).status().code() == want);
  CHECK(c->Friends(page).status().code() == want);
  CHECK(c->Counts(0).status().code() == want);
  CHECK(c->KnownFollowers(0, 1, 3).status().code() == want);
  CHECK(c->KnownFollowers(1, 0, 3).status().code() == want);
  CHECK(c->RemoveUser(0).status().code() == want);
  CHECK(c->Publish(0, 1, 0).status().code() == want);
  CHECK(c->DeletePost(0, 1).code() == want);
  CHECK(c->Timeline(feed).status().code() == want);
  CHECK(c->UserPosts(feed).status().code() == want);
  for (bool on : {true, false}) {
    CHECK(c->Mute(0, 1, on).status().code() == want);
    CHECK(c->Mute(1, 0, on).status().code() == want);
    CHECK(c->Hide(0, 1, on).status().code() == want);
    CHECK(c->Hide(1, 0, on).status().code() == want);
  }
  CHECK(c->Mutes(0).status().code() == want);
  CHECK(c->Hides(0).status().code() == want);
}

TEST_CASE("protocol.md: INFO's users: follow, publish, mute and hide add ids; reads do not") {
  TestServer server;
  auto c = server.Connect();
  const auto users = [&] { return *c->Info()->Get("users"); };
  CHECK(users() == 0);
  PageQuery q;
  q.user = 1;
  q.viewer = 2;
  REQUIRE(c->Following(q).ok());
  FeedQuery f;
  f.user = 3;
  REQUIRE(c->Timeline(f).ok());
  REQUIRE(c->Relation(4, 5).ok());
  CHECK(users() == 0);
  REQUIRE(c->Follow(1, 2).ok());
  CHECK(users() == 2);
  REQUIRE(c->Publish(3, 30, 0).ok());
  CHECK(users() == 3);
  REQUIRE(c->Mute(4, 1, true).ok());
  CHECK(users() == 4);
  REQUIRE(c->Hide(5, 1, true).ok());
  CHECK(users() == 5);
  REQUIRE(c->RemoveUser(2).ok());
  CHECK(users() == 5);
  CHECK(*c->Info()->Get("durability") == uint64_t(DurabilityCode::kEverySec));
}

}  // namespace
}  // namespace relgraph::net
