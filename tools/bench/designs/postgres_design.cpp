#include "tools/bench/designs/postgres_design.h"

#include <libpq-fe.h>

#include <chrono>
#include <cstdlib>
#include <limits>
#include <unordered_map>

namespace relgraph::bench {
namespace {

constexpr const char* kSchema = R"(
DROP TABLE IF EXISTS rel, counts, posts, inbox CASCADE;
CREATE TABLE rel (
  subject   bigint   NOT NULL,
  object    bigint   NOT NULL,
  state     smallint NOT NULL,  -- bit 0: subject follows object; bit 1: object follows subject
  follow_ts bigint,             -- when subject followed object
  fan_ts    bigint,             -- when object followed subject
  PRIMARY KEY (subject, object));
CREATE TABLE counts (uid bigint PRIMARY KEY, following int NOT NULL, fans int NOT NULL,
                     friends int NOT NULL);
CREATE TABLE posts (post bigint PRIMARY KEY, author bigint NOT NULL, ts bigint NOT NULL);
CREATE TABLE inbox (owner bigint NOT NULL, ts bigint NOT NULL, post bigint NOT NULL,
                    PRIMARY KEY (owner, ts, post));

CREATE OR REPLACE FUNCTION rg_follow(a bigint, b bigint, t bigint, cap int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE s smallint; n int; m int;
BEGIN
  IF a = b THEN RETURN -1; END IF;
  SELECT state INTO s FROM rel WHERE subject = a AND object = b FOR UPDATE;
  IF s & 1 = 1 THEN RETURN 0; END IF;
  SELECT following INTO n FROM counts WHERE uid = a;
  IF coalesce(n, 0) >= cap THEN RETURN -2; END IF;
  m := CASE WHEN s & 2 = 2 THEN 1 ELSE 0 END;
  INSERT INTO rel AS r VALUES (a, b, 1, t, NULL)
    ON CONFLICT (subject, object) DO UPDATE SET state = r.state | 1, follow_ts = t;
  INSERT INTO rel AS r VALUES (b, a, 2, NULL, t)
    ON CONFLICT (subject, object) DO UPDATE SET state = r.state | 2, fan_ts = t;
  INSERT INTO counts AS c VALUES (a, 1, 0, m)
    ON CONFLICT (uid) DO UPDATE SET following = c.following + 1, friends = c.friends + m;
  INSERT INTO counts AS c VALUES (b, 0, 1, m)
    ON CONFLICT (uid) DO UPDATE SET fans = c.fans + 1, friends = c.friends + m;
  RETURN 1;
END $$;

CREATE OR REPLACE FUNCTION rg_unfollow(a bigint, b bigint) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE s smallint; m int;
BEGIN
  SELECT state INTO s FROM rel WHERE subject = a AND object = b FOR UPDATE;
  IF s IS NULL OR s & 1 = 0 THEN RETURN 0; END IF;
  m := CASE WHEN s & 2 = 2 THEN 1 ELSE 0 END;
  IF m = 1 THEN
    UPDATE rel SET state = 2, follow_ts = NULL WHERE subject = a AND object = b;
    UPDATE rel SET state = 1, fan_ts = NULL WHERE subject = b AND object = a;
  ELSE
    DELETE FROM rel WHERE subject = a AND object = b;
    DELETE FROM rel WHERE subject = b AND object = a;
  END IF;
  UPDATE counts SET following = following - 1, friends = friends - m WHERE uid = a;
  UPDATE counts SET fans = fans - 1, friends = friends - m WHERE uid = b;
  RETURN 1;
END $$;

CREATE OR REPLACE FUNCTION rg_publish(a bigint, p bigint, t bigint) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE n int;
BEGIN
  INSERT INTO posts VALUES (p, a, t);
  INSERT INTO inbox SELECT object, t, p FROM rel WHERE subject = a AND state & 2 = 2
                    UNION ALL SELECT a, t, p;
  GET DIAGNOSTICS n = ROW_COUNT;
  RETURN n;
END $$;
)";

// Built after the bulk load (faster than keeping them up during COPY).
constexpr const char* kIndexes = R"(
CREATE INDEX rel_following ON rel (subject, follow_ts, object) WHERE state & 1 = 1;
CREATE INDEX rel_fans ON rel (subject, fan_ts, object) WHERE state & 2 = 2;
CREATE INDEX rel_friends ON rel (subject, greatest(follow_ts, fan_ts), object) WHERE state = 3;
)";

// A page's entries with the viewer's relation ($2; 0 matches no row).
#define RG_PAGE_SELECT(TS)             \
  "SELECT r.object, " TS               \
  ", coalesce(v.state, 0) FROM rel r " \
  "LEFT JOIN rel v ON v.subject = $2 AND v.object = r.object "

struct Statement {
  const char* name;
  const char* sql;
};
constexpr Statement kStatements[] = {
    {"follow", "SELECT rg_follow($1, $2, $3, $4)"},
    {"unfollow", "SELECT rg_unfollow($1, $2)"},
    {"relation", "SELECT state FROM rel WHERE subject = $1 AND object = $2"},
    {"relations",
     "SELECT object, state FROM rel WHERE subject = $1 AND object = ANY($2::bigint[])"},
    {"following", RG_PAGE_SELECT("r.follow_ts") "WHERE r.subject = $1 AND r.state & 1 = 1 ORDER BY "
                                                "r.follow_ts DESC, r.object DESC LIMIT $3"},
    {"fans",
     RG_PAGE_SELECT(
         "r.fan_ts") "WHERE r.subject = $1 AND r.state & 2 = 2 AND (r.fan_ts, r.object) < ($3, $4) "
                     "ORDER BY r.fan_ts DESC, r.object DESC LIMIT $5"},
    {"friends",
     RG_PAGE_SELECT("greatest(r.follow_ts, r.fan_ts)") "WHERE r.subject = $1 AND r.state = 3 "
                                                       "ORDER BY greatest(r.follow_ts, r.fan_ts) "
                                                       "DESC, r.object DESC LIMIT $3"},
    {"counts", "SELECT following, fans, friends FROM counts WHERE uid = $1"},
    {"publish", "SELECT rg_publish($1, $2, $3)"},
    {"timeline",
     "SELECT post, ts FROM inbox WHERE owner = $1 ORDER BY ts DESC, post DESC LIMIT $2"},
};

// PostgreSQL has no unsigned 64-bit type: ids are stored as the bigint with the same bits.
std::string Id(uint64_t id) {
  return std::to_string(static_cast<int64_t>(id));
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

using PgResult = std::unique_ptr<PGresult, void (*)(PGresult*)>;

class PostgresDesign final : public Design {
 public:
  PostgresDesign(PGconn* c, uint32_t max_following) : c_(c), cap_(std::to_string(max_following)) {}
  ~PostgresDesign() override { PQfinish(c_); }
  std::string name() const override { return "postgres"; }

  // Prepares the statements when the schema exists (else BulkLoad will).
  Status Prepare() {
    auto exists =
        Exec("SELECT to_regclass('rel') IS NOT NULL AND to_regclass('rel_fans') IS NOT NULL");
    if (!exists.ok()) return exists.status();
    if (std::string(PQgetvalue(exists->get(), 0, 0)) != "t") return Status::OK();
    for (const Statement& s : kStatements) {
      PgResult r(PQprepare(c_, s.name, s.sql, 0, nullptr), PQclear);
      if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) return Error(r.get(), s.name);
    }
    prepared_ = true;
    return Status::OK();
  }

  Result<uint64_t> Execute(std::span<const Op> ops, std::vector<Answer>* answers) override {
    if (!prepared_) {
      return Status(Code::kUnavailable, "postgres: no relgraph schema in this database (load it)");
    }
    std::vector<Answer> local;
    std::vector<Answer>& out = answers ? *answers : local;
    out.assign(ops.size(), Answer{});
    if (PQenterPipelineMode(c_) != 1)
      return Status::IOError("postgres: " + std::string(PQerrorMessage(c_)));
    for (const Op& op : ops) {
      RELGRAPH_RETURN_IF_ERROR(Send(op));
      if (PQpipelineSync(c_) != 1)
        return Status::IOError("postgres: " + std::string(PQerrorMessage(c_)));
    }
    uint64_t errors = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      bool synced = false;
      while (!synced) {
        PGresult* raw = PQgetResult(c_);
        if (raw == nullptr) {
          if (PQstatus(c_) != CONNECTION_OK) return Status::IOError("postgres: connection lost");
          continue;  // the end of one query's results
        }
        PgResult r(raw, PQclear);
        const ExecStatusType st = PQresultStatus(raw);
        if (st == PGRES_PIPELINE_SYNC) {
          synced = true;
        } else if (st == PGRES_TUPLES_OK) {
          Decode(ops[i], raw, &out[i]);
        } else if (out[i].status.ok()) {
          out[i].status = Error(raw, "operation");
        }
      }
      errors += out[i].status.ok() ? 0 : 1;
    }
    if (PQexitPipelineMode(c_) != 1)
      return Status::IOError("postgres: " + std::string(PQerrorMessage(c_)));
    return errors;
  }

  Status BulkLoad(const KeptGraph& kept) override {
    prepared_ = false;
    RELGRAPH_RETURN_IF_ERROR(Command(kSchema));
    const std::vector<BenchEdge>& edges = kept.edges;
    const std::vector<TimestampMs>& reverse = kept.reverse_ts;
    std::unordered_map<UserId, std::array<uint32_t, 3>> counts;
    RELGRAPH_RETURN_IF_ERROR(Copy("COPY rel FROM STDIN", [&](std::string* buf, size_t i) {
      if (i >= edges.size()) return false;
      const BenchEdge& e = edges[i];
      const std::string a = Id(e.follower), b = Id(e.followee);
      const std::string ts = std::to_string(e.ts);
      if (reverse[i] >= 0) {
        *buf += a + '\t' + b + "\t3\t" + ts + '\t' + std::to_string(reverse[i]) + '\n';
        ++counts[e.follower][2];
      } else {
        *buf += a + '\t' + b + "\t1\t" + ts + "\t\\N\n";
        *buf += b + '\t' + a + "\t2\t\\N\t" + ts + '\n';
      }
      ++counts[e.follower][0];
      ++counts[e.followee][1];
      return true;
    }));
    auto it = counts.begin();
    RELGRAPH_RETURN_IF_ERROR(Copy("COPY counts FROM STDIN", [&](std::string* buf, size_t) {
      if (it == counts.end()) return false;
      *buf += Id(it->first) + '\t' + std::to_string(it->second[0]) + '\t' +
              std::to_string(it->second[1]) + '\t' + std::to_string(it->second[2]) + '\n';
      ++it;
      return true;
    }));
    RELGRAPH_RETURN_IF_ERROR(Command(kIndexes));
    RELGRAPH_RETURN_IF_ERROR(Command("VACUUM ANALYZE rel"));
    RELGRAPH_RETURN_IF_ERROR(Command("VACUUM ANALYZE counts"));
    return Prepare();
  }

  Result<MemoryFacts> Memory() override {
    auto r = Exec(
        "SELECT pg_total_relation_size('rel') + pg_total_relation_size('counts'), "
        "pg_total_relation_size('posts') + pg_total_relation_size('inbox')");
    if (!r.ok()) return r.status();
    MemoryFacts m;
    m.bytes = std::strtoull(PQgetvalue(r->get(), 0, 0), nullptr, 10);
    m.note =
        "pg_total_relation_size of rel and counts (tables, indexes, TOAST); the feed's "
        "posts and inbox " +
        std::to_string(std::strtoull(PQgetvalue(r->get(), 0, 1), nullptr, 10) >> 20) + " MiB";
    return m;
  }

 private:
  Status Error(const PGresult* r, const std::string& what) const {
    const char* msg = r ? PQresultErrorMessage(r) : PQerrorMessage(c_);
    std::string text = msg ? msg : "";
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return Status(Code::kInternal, "postgres " + what + ": " + text);
  }

  Result<PgResult> Exec(const char* sql) {
    PgResult r(PQexec(c_, sql), PQclear);
    const ExecStatusType st = PQresultStatus(r.get());
    if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) return Error(r.get(), sql);
    return r;
  }
  Status Command(const char* sql) {
    auto r = Exec(sql);
    return r.ok() ? Status::OK() : r.status();
  }

  // COPY ... FROM STDIN with rows from row(buf, i) for i = 0, 1, ... until it returns false.
  template <typename RowFn>
  Status Copy(const char* sql, RowFn&& row) {
    PgResult start(PQexec(c_, sql), PQclear);
    if (PQresultStatus(start.get()) != PGRES_COPY_IN) return Error(start.get(), sql);
    std::string buf;
    for (size_t i = 0;; ++i) {
      const bool more = row(&buf, i);
      if (buf.size() >= (1 << 20) || (!more && !buf.empty())) {
        if (PQputCopyData(c_, buf.data(), static_cast<int>(buf.size())) != 1) {
          return Error(nullptr, sql);
        }
        buf.clear();
      }
      if (!more) break;
    }
    if (PQputCopyEnd(c_, nullptr) != 1) return Error(nullptr, sql);
    PgResult end(PQgetResult(c_), PQclear);
    if (PQresultStatus(end.get()) != PGRES_COMMAND_OK) return Error(end.get(), sql);
    while (PGresult* extra = PQgetResult(c_)) PQclear(extra);
    return Status::OK();
  }

  Status Send(const Op& op) {
    std::string p[5];
    int n = 0;
    const char* stmt = "";
    auto arg = [&](std::string v) { p[n++] = std::move(v); };
    switch (op.kind) {
      case OpKind::kFollow:
        stmt = "follow";
        arg(Id(op.user)), arg(Id(op.other));
        arg(std::to_string(op.ts ? op.ts : NowMs())), arg(cap_);
        break;
      case OpKind::kUnfollow:
        stmt = "unfollow";
        arg(Id(op.user)), arg(Id(op.other));
        break;
      case OpKind::kRelation:
        stmt = "relation";
        arg(Id(op.user)), arg(Id(op.other));
        break;
      case OpKind::kRelations: {
        stmt = "relations";
        std::string list = "{";
        for (UserId x : op.others) list += Id(x) + ",";
        list.back() = '}';
        arg(Id(op.user)), arg(list);
        break;
      }
      case OpKind::kFollowingPage:
      case OpKind::kFriendsPage:
        stmt = op.kind == OpKind::kFollowingPage ? "following" : "friends";
        arg(Id(op.user)), arg(Id(op.viewer)), arg(std::to_string(op.limit));
        break;
      case OpKind::kFansPage:
        stmt = "fans";
        arg(Id(op.user)), arg(Id(op.viewer));
        arg(std::to_string(op.ts ? op.ts : std::numeric_limits<int64_t>::max()));
        arg(op.ts ? Id(op.cursor_user) : std::to_string(std::numeric_limits<int64_t>::max()));
        arg(std::to_string(op.limit));
        break;
      case OpKind::kCounts:
        stmt = "counts";
        arg(Id(op.user));
        break;
      case OpKind::kPublish:
        stmt = "publish";
        arg(Id(op.user)), arg(Id(op.post));
        arg(std::to_string(op.ts ? op.ts : NowMs()));
        break;
      case OpKind::kTimeline:
        stmt = "timeline";
        arg(Id(op.user)), arg(std::to_string(op.limit));
        break;
    }
    const char* values[5];
    for (int i = 0; i < n; ++i) values[i] = p[i].c_str();
    if (PQsendQueryPrepared(c_, stmt, n, values, nullptr, nullptr, 0) != 1) {
      return Status::IOError("postgres: " + std::string(PQerrorMessage(c_)));
    }
    return Status::OK();
  }

  // A bigint column: an id (its bits), a time or a count.
  static uint64_t U64(const PGresult* r, int row, int col) {
    return static_cast<uint64_t>(std::strtoll(PQgetvalue(r, row, col), nullptr, 10));
  }

  void Decode(const Op& op, const PGresult* r, Answer* a) const {
    const int rows = PQntuples(r);
    switch (op.kind) {
      case OpKind::kFollow:
      case OpKind::kUnfollow: {
        const int64_t v = std::strtoll(PQgetvalue(r, 0, 0), nullptr, 10);
        if (v == -1) a->status = Status(Code::kSelfFollow, "postgres: self-follow");
        if (v == -2) a->status = Status(Code::kFollowLimit, "postgres: follow limit");
        a->changed = v == 1;
        return;
      }
      case OpKind::kRelation:
        a->relations = {static_cast<uint8_t>(rows ? U64(r, 0, 0) : 0)};
        return;
      case OpKind::kRelations: {
        std::unordered_map<UserId, uint8_t> state;
        for (int i = 0; i < rows; ++i) state[U64(r, i, 0)] = static_cast<uint8_t>(U64(r, i, 1));
        for (UserId x : op.others) a->relations.push_back(state.count(x) ? state[x] : 0);
        return;
      }
      case OpKind::kCounts:
        if (rows) {
          a->following = static_cast<uint32_t>(U64(r, 0, 0));
          a->fans = static_cast<uint32_t>(U64(r, 0, 1));
          a->friends = static_cast<uint32_t>(U64(r, 0, 2));
        }
        return;
      case OpKind::kPublish:
        return;
      case OpKind::kTimeline:
        for (int i = 0; i < rows; ++i) {
          a->entries.push_back(Entry{U64(r, i, 0), static_cast<TimestampMs>(U64(r, i, 1)), 0});
        }
        return;
      default:  // pages: object, time, viewer's state
        for (int i = 0; i < rows; ++i) {
          a->entries.push_back(Entry{U64(r, i, 0), static_cast<TimestampMs>(U64(r, i, 1)),
                                     static_cast<uint8_t>(U64(r, i, 2))});
        }
        return;
    }
  }

  PGconn* c_;
  const std::string cap_;
  bool prepared_ = false;
};

}  // namespace

Result<std::unique_ptr<Design>> ConnectPostgresDesign(const std::string& url,
                                                      uint32_t max_following) {
  PGconn* c = PQconnectdb(url.c_str());
  if (PQstatus(c) != CONNECTION_OK) {
    std::string why = PQerrorMessage(c);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    PQfinish(c);
    return Status::IOError("cannot connect to PostgreSQL at " + url + ": " + why);
  }
  PQsetNoticeProcessor(
      c, [](void*, const char*) {}, nullptr);  // DROP ... IF EXISTS notices
  auto design = std::make_unique<PostgresDesign>(c, max_following);
  RELGRAPH_RETURN_IF_ERROR(design->Prepare());
  return std::unique_ptr<Design>(std::move(design));
}

}  // namespace relgraph::bench
