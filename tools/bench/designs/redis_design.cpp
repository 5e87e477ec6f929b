#include "tools/bench/designs/redis_design.h"

#include <hiredis/hiredis.h>

#include <chrono>
#include <cmath>
#include <cstdlib>

namespace relgraph::bench {
namespace {

// KEYS: fo:a fa:b fo:b fr:a fr:b; ARGV: a b ts cap. 1: new edge, 0: it existed.
constexpr const char* kFollowScript = R"(
if ARGV[1] == ARGV[2] then return redis.error_reply('self_follow') end
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 0 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
  return redis.error_reply('follow_limit')
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
local back = redis.call('ZSCORE', KEYS[3], ARGV[1])
if back then
  local t = ARGV[3]
  if tonumber(back) > tonumber(t) then t = back end
  redis.call('ZADD', KEYS[4], t, ARGV[2])
  redis.call('ZADD', KEYS[5], t, ARGV[1])
end
return 1
)";

// KEYS: fo:a fa:b fr:a fr:b; ARGV: a b. 1: the edge went, 0: there was none.
constexpr const char* kUnfollowScript = R"(
if redis.call('ZREM', KEYS[1], ARGV[2]) == 0 then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1
)";

// KEYS: fa:author; ARGV: author post ts length. Returns the timelines written.
constexpr const char* kPublishScript = R"(
local readers = redis.call('ZRANGE', KEYS[1], 0, -1)
readers[#readers + 1] = ARGV[1]
local keep = -1 - tonumber(ARGV[4])
for _, r in ipairs(readers) do
  local key = 'tl:' .. r
  redis.call('ZADD', key, ARGV[3], ARGV[2])
  redis.call('ZREMRANGEBYRANK', key, 0, keep)
end
return #readers
)";

using Reply = std::unique_ptr<redisReply, void (*)(void*)>;

Status ReplyError(const redisReply* r) {
  const std::string text(r->str, r->len);
  if (text.find("self_follow") != std::string::npos) return Status(Code::kSelfFollow, text);
  if (text.find("follow_limit") != std::string::npos) return Status(Code::kFollowLimit, text);
  return Status(Code::kInternal, "redis: " + text);
}

int64_t Score(const redisReply* r) {
  return r && r->type == REDIS_REPLY_STRING ? std::llround(std::strtod(r->str, nullptr)) : 0;
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class RedisDesign final : public Design {
 public:
  RedisDesign(redisContext* c, uint32_t max_following)
      : c_(c), cap_(std::to_string(max_following)) {}
  ~RedisDesign() override { redisFree(c_); }
  std::string name() const override { return "redis"; }

  Status LoadScripts() {
    for (auto [script, sha] :
         {std::pair{kFollowScript, &follow_sha_}, std::pair{kUnfollowScript, &unfollow_sha_},
          std::pair{kPublishScript, &publish_sha_}}) {
      Command({"SCRIPT", "LOAD", script});
      auto r = Read();
      if (!r.ok()) return r.status();
      if ((*r)->type != REDIS_REPLY_STRING) return ReplyError(r->get());
      *sha = std::string((*r)->str, (*r)->len);
    }
    return Status::OK();
  }

  Result<uint64_t> Execute(std::span<const Op> ops, std::vector<Answer>* answers) override {
    std::vector<Answer> local;
    std::vector<Answer>& out = answers ? *answers : local;
    out.assign(ops.size(), Answer{});
    // Round trip 1: every operation's commands.
    std::vector<uint8_t> replies_of(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) replies_of[i] = QueueFirst(ops[i]);
    std::vector<size_t> second;  // pages whose viewer relations take a second round trip
    for (size_t i = 0; i < ops.size(); ++i) {
      std::vector<Reply> rs;
      for (uint8_t k = 0; k < replies_of[i]; ++k) {
        auto r = Read();
        if (!r.ok()) return r.status();
        rs.push_back(std::move(*r));
      }
      DecodeFirst(ops[i], rs, &out[i]);
      if (out[i].status.ok() && ops[i].viewer != 0 && !out[i].entries.empty() && IsPage(ops[i])) {
        second.push_back(i);
      }
    }
    // Round trip 2: the viewer's relation to each of the page's users.
    for (size_t i : second) {
      std::vector<UserId> ids;
      for (const Entry& e : out[i].entries) ids.push_back(e.id);
      QueueRelations(ops[i].viewer, ids);
    }
    for (size_t i : second) {
      auto follows = Read();
      if (!follows.ok()) return follows.status();
      auto followed_by = Read();
      if (!followed_by.ok()) return followed_by.status();
      for (const Reply* r : {&*follows, &*followed_by}) {
        if ((*r)->type == REDIS_REPLY_ERROR) out[i].status = ReplyError(r->get());
      }
      if (!out[i].status.ok()) continue;
      for (size_t k = 0; k < out[i].entries.size(); ++k) {
        out[i].entries[k].relation = RelationAt(follows->get(), followed_by->get(), k);
      }
    }
    uint64_t errors = 0;
    for (const Answer& a : out) errors += a.status.ok() ? 0 : 1;
    return errors;
  }

  Status BulkLoad(const KeptGraph& kept) override {
    Command({"FLUSHALL"});
    RELGRAPH_RETURN_IF_ERROR(ExpectOk());
    const std::vector<BenchEdge>& edges = kept.edges;
    const std::vector<TimestampMs>& reverse = kept.reverse_ts;
    size_t pending = 0;
    for (size_t i = 0; i < edges.size(); ++i) {
      const BenchEdge& e = edges[i];
      const std::string a = std::to_string(e.follower), b = std::to_string(e.followee);
      const std::string ts = std::to_string(e.ts);
      Command({"ZADD", "fo:" + a, ts, b});
      Command({"ZADD", "fa:" + b, ts, a});
      pending += 2;
      if (reverse[i] >= 0) {
        Command({"ZADD", "fr:" + a, std::to_string(std::max(e.ts, reverse[i])), b});
        ++pending;
      }
      if (pending >= 4096 || i + 1 == edges.size()) {
        for (; pending > 0; --pending) RELGRAPH_RETURN_IF_ERROR(ExpectOk());
      }
    }
    return Status::OK();
  }

  Result<MemoryFacts> Memory() override {
    Command({"INFO", "memory"});
    auto r = Read();
    if (!r.ok()) return r.status();
    const std::string text((*r)->str ? (*r)->str : "", (*r)->len);
    auto field = [&](const std::string& name) -> uint64_t {
      const size_t at = text.find("\n" + name + ":");
      return at == std::string::npos
                 ? 0
                 : std::strtoull(text.c_str() + at + name.size() + 2, nullptr, 10);
    };
    MemoryFacts m;
    m.bytes = field("used_memory") - field("used_memory_startup");
    m.note = "INFO used_memory - used_memory_startup; used_memory_rss " +
             std::to_string(field("used_memory_rss") >> 20) + " MiB";
    return m;
  }

 private:
  static bool IsPage(const Op& op) {
    return op.kind == OpKind::kFollowingPage || op.kind == OpKind::kFansPage ||
           op.kind == OpKind::kFriendsPage;
  }

  void CommandArgs(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    redisAppendCommandArgv(c_, static_cast<int>(argv.size()), argv.data(), lens.data());
  }
  void Command(std::initializer_list<std::string> args) { CommandArgs(std::vector(args)); }

  Result<Reply> Read() {
    void* raw = nullptr;
    if (redisGetReply(c_, &raw) != REDIS_OK) {
      return Status::IOError(std::string("redis: ") +
                             (c_->errstr[0] ? c_->errstr : "connection lost"));
    }
    return Reply(static_cast<redisReply*>(raw), freeReplyObject);
  }
  Status ExpectOk() {
    auto r = Read();
    if (!r.ok()) return r.status();
    return (*r)->type == REDIS_REPLY_ERROR ? ReplyError(r->get()) : Status::OK();
  }

  // Queues relation(user, id) for each of ids: two replies, ZMSCORE of the ids in user's
  // following set and in its fans set (read with RelationAt).
  void QueueRelations(UserId user, std::span<const UserId> ids) {
    for (const char* prefix : {"fo:", "fa:"}) {
      std::vector<std::string> args{"ZMSCORE", prefix + std::to_string(user)};
      for (UserId id : ids) args.push_back(std::to_string(id));
      CommandArgs(args);
    }
  }
  // The relation bits of the k-th id from QueueRelations' two replies.
  static uint8_t RelationAt(const redisReply* follows, const redisReply* followed_by, size_t k) {
    uint8_t bits = 0;
    if (k < follows->elements && follows->element[k]->type != REDIS_REPLY_NIL) bits |= kFollowsBit;
    if (k < followed_by->elements && followed_by->element[k]->type != REDIS_REPLY_NIL) {
      bits |= kFollowedByBit;
    }
    return bits;
  }

  // Appends op's first round of commands; returns how many replies they bring.
  uint8_t QueueFirst(const Op& op) {
    const std::string u = std::to_string(op.user), o = std::to_string(op.other);
    const std::string limit_end = std::to_string(op.limit - 1);
    switch (op.kind) {
      case OpKind::kFollow:
        Command({"EVALSHA", follow_sha_, "5", "fo:" + u, "fa:" + o, "fo:" + o, "fr:" + u, "fr:" + o,
                 u, o, std::to_string(op.ts ? op.ts : NowMs()), cap_});
        return 1;
      case OpKind::kUnfollow:
        Command({"EVALSHA", unfollow_sha_, "4", "fo:" + u, "fa:" + o, "fr:" + u, "fr:" + o, u, o});
        return 1;
      case OpKind::kRelation:
        QueueRelations(op.user, std::span<const UserId>(&op.other, 1));
        return 2;
      case OpKind::kRelations:
        QueueRelations(op.user, op.others);
        return 2;
      case OpKind::kFollowingPage:
        Command({"ZREVRANGE", "fo:" + u, "0", limit_end, "WITHSCORES"});
        return 1;
      case OpKind::kFansPage:
        if (op.ts == 0) {
          Command({"ZREVRANGE", "fa:" + u, "0", limit_end, "WITHSCORES"});
        } else {
          Command({"ZREVRANGEBYSCORE", "fa:" + u, "(" + std::to_string(op.ts), "-inf", "WITHSCORES",
                   "LIMIT", "0", std::to_string(op.limit)});
        }
        return 1;
      case OpKind::kFriendsPage:
        Command({"ZREVRANGE", "fr:" + u, "0", limit_end, "WITHSCORES"});
        return 1;
      case OpKind::kCounts:
        Command({"ZCARD", "fo:" + u});
        Command({"ZCARD", "fa:" + u});
        Command({"ZCARD", "fr:" + u});
        return 3;
      case OpKind::kPublish:
        Command({"EVALSHA", publish_sha_, "1", "fa:" + u, u, std::to_string(op.post),
                 std::to_string(op.ts ? op.ts : NowMs()), std::to_string(kRedisTimelineLength)});
        return 1;
      case OpKind::kTimeline:
        Command({"ZREVRANGE", "tl:" + u, "0", limit_end, "WITHSCORES"});
        return 1;
    }
    return 0;
  }

  static void DecodeFirst(const Op& op, const std::vector<Reply>& rs, Answer* a) {
    for (const Reply& r : rs) {
      if (r->type == REDIS_REPLY_ERROR) {
        a->status = ReplyError(r.get());
        return;
      }
    }
    const redisReply* r = rs[0].get();
    switch (op.kind) {
      case OpKind::kFollow:
      case OpKind::kUnfollow:
        a->changed = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
        return;
      case OpKind::kRelation:
      case OpKind::kRelations:
        for (size_t k = 0; k < r->elements; ++k) {
          a->relations.push_back(RelationAt(r, rs[1].get(), k));
        }
        return;
      case OpKind::kCounts:
        a->following = static_cast<uint32_t>(rs[0]->integer);
        a->fans = static_cast<uint32_t>(rs[1]->integer);
        a->friends = static_cast<uint32_t>(rs[2]->integer);
        return;
      case OpKind::kPublish:
        return;
      default:  // pages and timelines: [member, score, ...]
        for (size_t k = 0; k + 1 < r->elements; k += 2) {
          a->entries.push_back(
              Entry{std::strtoull(r->element[k]->str, nullptr, 10), Score(r->element[k + 1]), 0});
        }
        return;
    }
  }

  redisContext* c_;
  const std::string cap_;
  std::string follow_sha_, unfollow_sha_, publish_sha_;
};

}  // namespace

Result<std::unique_ptr<Design>> ConnectRedisDesign(const std::string& url, uint32_t max_following) {
  const std::string rest = url.substr(std::string("redis://").size());
  const size_t colon = rest.rfind(':');
  const std::string host = colon == std::string::npos ? rest : rest.substr(0, colon);
  const int port = colon == std::string::npos ? 6379 : std::atoi(rest.c_str() + colon + 1);
  if (host.empty() || port <= 0 || port > 65535) {
    return Status::InvalidArgument("a Redis target is redis://HOST:PORT, not " + url);
  }
  redisContext* c = redisConnectWithTimeout(host.c_str(), port, timeval{5, 0});
  if (c == nullptr || c->err) {
    const std::string why = c ? c->errstr : "out of memory";
    if (c) redisFree(c);
    return Status::IOError("cannot connect to Redis at " + host + ":" + std::to_string(port) +
                           ": " + why);
  }
  auto design = std::make_unique<RedisDesign>(c, max_following);
  RELGRAPH_RETURN_IF_ERROR(design->LoadScripts());
  return std::unique_ptr<Design>(std::move(design));
}

}  // namespace relgraph::bench
