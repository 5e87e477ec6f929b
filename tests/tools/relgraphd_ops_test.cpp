// relgraphd as an operator watches and tunes it: --log-format=json makes every stderr line a
// JSON object (the slow-command line with its fields), and SIGHUP re-reads the --config file,
// applying the live settings (the slow log's threshold here), logging each change, logging
// and not applying one that needs a restart, and keeping everything on a malformed file; the
// HTTP port speaks HTTPS with the binary port's certificate, swapped on SIGHUP; a fatal
// signal leaves its report and stack in the log.
#include <doctest.h>
#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "net/client/client.h"
#include "tests/net/http/https_get.h"
#include "tests/net/tls/test_certs.h"
#include "tests/storage/test_dir.h"
#include "tests/tools/relgraphd_process.h"

namespace relgraph {
namespace {

// A tiny JSON checker: whether `s` is exactly one JSON value (RFC 8259), and for an object
// its top-level string members.
class Json {
 public:
  explicit Json(std::string_view s) : s_(s) {}
  bool Object(std::vector<std::pair<std::string, std::string>>* strings) {
    strings_ = strings;
    Space();
    if (!Obj(/*top=*/true)) return false;
    Space();
    return i_ == s_.size();
  }

 private:
  void Space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool Eat(char c) {
    Space();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  bool Str(std::string* out) {
    Space();
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    for (++i_; i_ < s_.size(); ++i_) {
      const auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') return ++i_, true;
      if (c < 0x20) return false;
      if (c == '\\') {
        if (++i_ >= s_.size()) return false;
        const char e = s_[i_];
        if (e == 'u') {
          for (int k = 0; k < 4; ++k) {
            if (++i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_])))
              return false;
          }
          out->push_back('?');
        } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          return false;
        } else {
          out->push_back(e == 'n' ? '\n' : e);
        }
        continue;
      }
      out->push_back(static_cast<char>(c));
    }
    return false;
  }
  bool Num() {
    Space();
    const size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) ||
                              std::string_view(".eE+-").find(s_[i_]) != std::string_view::npos)) {
      ++i_;
    }
    return i_ > start && std::isdigit(static_cast<unsigned char>(s_[i_ - 1]));
  }
  bool Value() {
    Space();
    if (i_ >= s_.size()) return false;
    std::string ignored;
    switch (s_[i_]) {
      case '{':
        return Obj(false);
      case '[':
        ++i_;
        if (Eat(']')) return true;
        do {
          if (!Value()) return false;
        } while (Eat(','));
        return Eat(']');
      case '"':
        return Str(&ignored);
      case 't':
        return Word("true");
      case 'f':
        return Word("false");
      case 'n':
        return Word("null");
      default:
        return Num();
    }
  }
  bool Word(std::string_view w) {
    if (s_.substr(i_, w.size()) != w) return false;
    i_ += w.size();
    return true;
  }
  bool Obj(bool top) {
    if (!Eat('{')) return false;
    if (Eat('}')) return true;
    do {
      std::string key;
      if (!Str(&key) || !Eat(':')) return false;
      Space();
      if (top && strings_ != nullptr && i_ < s_.size() && s_[i_] == '"') {
        std::string value;
        if (!Str(&value)) return false;
        strings_->emplace_back(key, value);
      } else if (!Value()) {
        return false;
      }
    } while (Eat(','));
    return Eat('}');
  }
  std::string_view s_;
  size_t i_ = 0;
  std::vector<std::pair<std::string, std::string>>* strings_ = nullptr;
};

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Waits up to 10 s for `needle` in the log.
bool LogSays(const std::string& log, const std::string& needle) {
  for (int i = 0; i < 500; ++i) {
    if (Text(log).find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Stops the relgraphd of a test that failed before its own SIGTERM (a REQUIRE threw).
struct StopOnExit {
  pid_t pid;
  ~StopOnExit() {
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    WaitExit(pid);
  }
};

// SIGTERM, then its exit status; the guard has nothing left to do.
int Stop(StopOnExit& guard) {
  const pid_t pid = guard.pid;
  guard.pid = 0;
  REQUIRE(kill(pid, SIGTERM) == 0);
  return WaitExit(pid);
}

std::unique_ptr<net::Client> Connect(uint16_t port) {
  net::ClientOptions o;
  o.port = port;
  auto c = net::Client::Connect(o);
  REQUIRE_MESSAGE(c.ok(), c.status().ToString());
  return std::move(*c);
}

TEST_CASE("json checker: accepts JSON, refuses what is not") {
  std::vector<std::pair<std::string, std::string>> s;
  CHECK(Json(R"({"a":"x\n\u00e9","b":[1,-2.5e3,true,null,{"c":{}}]})").Object(&s));
  CHECK(s == std::vector<std::pair<std::string, std::string>>{{"a", "x\n?"}});
  CHECK_FALSE(Json(R"({"a":"x)").Object(nullptr));
  CHECK_FALSE(Json("{\"a\":\"tab\there\"}").Object(nullptr));  // a raw control byte
  CHECK_FALSE(Json(R"({"a":1} x)").Object(nullptr));
  CHECK_FALSE(Json("relgraphd: listening").Object(nullptr));
}

TEST_CASE("relgraphd: --log-format=json writes every stderr line as one JSON object") {
  testing::TestDir dir;
  const std::string log = dir.path() + "/log";
  const pid_t pid = Spawn({"--listen=127.0.0.1:0", "--data-dir=" + dir.path() + "/data",
                           "--http=off", "--log-format=json", "--slowlog-us=0"},
                          log);
  StopOnExit guard{pid};
  {
    auto c = Connect(WaitForPort(log, pid));
    REQUIRE(c->Follow(1, 2, int64_t{1700000000000}).ok());
    // An invalid name (refused), whose args hold quotes, a newline and a backslash.
    REQUIRE(!c->Call(net::DeleteCursorRequest{"odd \"name\"\n\\"}).ok());
  }
  CHECK(Stop(guard) == 0);
  const auto lines = Lines(log);
  REQUIRE(lines.size() >= 5);
  bool follow = false, cursor = false;
  for (const std::string& line : lines) {
    INFO(line);
    std::vector<std::pair<std::string, std::string>> fields;
    REQUIRE(Json(line).Object(&fields));
    REQUIRE(fields.size() >= 3);
    CHECK(fields[0].first == "ts");
    CHECK(fields[0].second.size() == 24);  // 2026-11-28T01:02:03.456Z
    CHECK(fields[1].first == "level");
    CHECK(fields[2].first == "msg");
    if (fields[2].second != "slow command") continue;
    CHECK(line.find("\"duration_us\":") != std::string::npos);
    for (const auto& [k, v] : fields) {
      if (k == "command" && v == "follow") follow = true;
      if (k == "command" && v == "delete_cursor") cursor = true;
      if (k == "client") CHECK(v.rfind("127.0.0.1:", 0) == 0);
    }
  }
  CHECK(follow);
  CHECK(cursor);
  CHECK(Text(log).find("\"args\":\"1 2 1700000000000\"") != std::string::npos);
}

TEST_CASE("relgraphd: SIGHUP re-reads --config: the slow log's threshold changes, the rest waits") {
  testing::TestDir dir;
  const std::string log = dir.path() + "/log";
  const std::string conf = dir.path() + "/relgraphd.conf";
  const auto write_conf = [&](const std::string& text) {
    std::ofstream out(conf, std::ios::trunc);
    out << text;
  };
  write_conf("# a test's\nslowlog-us = 60000000\nmax-frame = 1048576\n");
  const pid_t pid = Spawn({"--config=" + conf, "--listen=127.0.0.1:0",
                           "--data-dir=" + dir.path() + "/data", "--http=off"},
                          log);
  StopOnExit guard{pid};
  auto c = Connect(WaitForPort(log, pid));
  REQUIRE(c->Follow(1, 2).ok());
  auto r = c->Slowlog();
  REQUIRE(r.ok());
  CHECK(r->threshold_us == 60000000);
  CHECK(r->entries.empty());

  // The threshold to 0 (every command), and a setting that needs a restart.
  write_conf("slowlog-us = 0\nslowlog-max-len = 5\nmax-frame = 2097152\n");
  REQUIRE(kill(pid, SIGHUP) == 0);
  REQUIRE(LogSays(log, "reload: slowlog-us 60000000 -> 0"));
  CHECK(LogSays(log, "reload: slowlog-max-len 128 -> 5"));
  CHECK(LogSays(log, "reload: max-frame 1048576 -> 2097152 needs a restart: not applied"));
  REQUIRE(c->Follow(1, 3).ok());
  r = c->Slowlog();
  REQUIRE(r.ok());
  CHECK(r->threshold_us == 0);
  CHECK(r->max_len == 5);
  REQUIRE(r->entries.size() == 1);
  CHECK(r->entries[0].args == "1 3 -");
  CHECK(c->hello().max_frame == 1u << 20);  // not applied

  // A malformed file: logged, nothing changes.
  write_conf("slowlog-us = 7\nthis line has no equals sign\n");
  REQUIRE(kill(pid, SIGHUP) == 0);
  REQUIRE(LogSays(log, "expected key = value: nothing changed"));
  CHECK(Text(log).find("slowlog-us 0 -> 7") == std::string::npos);
  r = c->Slowlog();
  REQUIRE(r.ok());
  CHECK(r->threshold_us == 0);

  c.reset();
  CHECK(Stop(guard) == 0);
}

TEST_CASE("relgraphd: on reload, a flag still wins over the file") {
  testing::TestDir dir;
  const std::string log = dir.path() + "/log";
  const std::string conf = dir.path() + "/relgraphd.conf";
  { std::ofstream(conf) << "slowlog-us = 5000\n"; }
  const pid_t pid = Spawn({"--config=" + conf, "--listen=127.0.0.1:0", "--slowlog-us=off",
                           "--data-dir=" + dir.path() + "/data", "--http=off"},
                          log);
  StopOnExit guard{pid};
  auto c = Connect(WaitForPort(log, pid));
  CHECK(c->Slowlog()->threshold_us == -1);
  { std::ofstream(conf, std::ios::trunc) << "slowlog-us = 0\nidle-timeout-ms = 60000\n"; }
  REQUIRE(kill(pid, SIGHUP) == 0);
  REQUIRE(LogSays(log, "reload: idle-timeout-ms 300000 -> 60000"));
  CHECK(c->Slowlog()->threshold_us == -1);
  c.reset();
  CHECK(Stop(guard) == 0);
}

// The HTTP port from relgraphd's "HTTPS on HOST:PORT" log line (LogSays has waited for it).
uint16_t HttpsPort(const std::string& log) {
  std::smatch m;
  const std::string text = Text(log);
  REQUIRE(std::regex_search(text, m, std::regex("HTTPS on [0-9.]+:([0-9]+)")));
  return static_cast<uint16_t>(std::stoi(m[1]));
}

TEST_CASE("relgraphd: the HTTP port speaks HTTPS with --tls-cert, and SIGHUP swaps its certificate") {
  testing::TestDir dir;
  const testing::TestPki pki = testing::MakeTestPki(dir.path() + "/pki");
  // The files relgraphd is given; a rotation overwrites them in place.
  const std::string cert = dir.path() + "/http.pem", key = dir.path() + "/http.key";
  const auto install = [&](const testing::CertFiles& from) {
    namespace fs = std::filesystem;
    fs::copy_file(from.cert, cert, fs::copy_options::overwrite_existing);
    fs::copy_file(from.key, key, fs::copy_options::overwrite_existing);
  };
  install(pki.server);
  const std::string log = dir.path() + "/log";
  const pid_t pid = Spawn({"--listen=127.0.0.1:0", "--data-dir=" + dir.path() + "/data",
                           "--http=127.0.0.1:0", "--tls-cert=" + cert, "--tls-key=" + key},
                          log);
  StopOnExit guard{pid};
  REQUIRE(LogSays(log, "HTTPS on 127.0.0.1:"));
  WaitForPort(log, pid);  // serving: /metrics has the node's figures
  const uint16_t port = HttpsPort(log);
  net::TlsClientOptions trusting;
  trusting.enabled = true;
  trusting.ca_file = pki.ca;
  auto kept = testing::HttpsConnection::Open(port, trusting);
  REQUIRE_MESSAGE(kept.ok(), kept.status().ToString());
  const auto metrics = (*kept)->Get("/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.body.find("relgraph_build_info{") != std::string::npos);
  CHECK(testing::HttpGet(port, "/healthz").status == 400);  // plain HTTP is refused

  install(pki.rogue_server);
  REQUIRE(kill(pid, SIGHUP) == 0);
  REQUIRE(LogSays(log, "reload: TLS certificates and clients read again"));
  CHECK(testing::HttpsGet(port, trusting, "/healthz").status == 0);  // the old CA: refused
  net::TlsClientOptions rogue = trusting;
  rogue.ca_file = pki.rogue_ca;
  CHECK(testing::HttpsGet(port, rogue, "/healthz").status == 200);
  CHECK((*kept)->Get("/healthz").status == 200);  // the open connection stays
  kept = Status(Code::kUnavailable, "closed");
  CHECK(Stop(guard) == 0);
}

TEST_CASE("relgraphd: a fatal signal is reported in the log with the stack, and still kills it") {
#if defined(__SANITIZE_ADDRESS__)
  MESSAGE("not run under AddressSanitizer: relgraphd leaves fatal signals to its report");
#else
  const rlimit no_core{0, 0};  // inherited by the child: no core file left by this test
  REQUIRE(setrlimit(RLIMIT_CORE, &no_core) == 0);
  testing::TestDir dir;
  const std::string log = dir.path() + "/log";
  const pid_t pid = Spawn({"--listen=127.0.0.1:0", "--data-dir=" + dir.path() + "/data",
                           "--http=off"},
                          log);
  StopOnExit guard{pid};
  REQUIRE(Connect(WaitForPort(log, pid))->Ping().ok());
  REQUIRE(kill(pid, SIGSEGV) == 0);
  guard.pid = 0;
  CHECK(WaitExit(pid) == 128 + SIGSEGV);  // the signal's own death: exit status unchanged
  const std::string text = Text(log);
  INFO(text);
  CHECK(text.find("relgraphd: fatal signal Segmentation fault sent by process " +
                  std::to_string(getpid())) != std::string::npos);
  CHECK(text.find("; stack:\n") != std::string::npos);
  CHECK(std::regex_search(text, std::regex("relgraphd\\([^)]*\\)\\[0x[0-9a-f]+\\]")));  // a frame
  CHECK(text.find("addr2line -f -C -e PROGRAM OFFSET") != std::string::npos);
#endif
}

}  // namespace
}  // namespace relgraph
