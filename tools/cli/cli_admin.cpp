// relgraph-cli's session and admin commands: ping, info (values by name where they are
// modes or versions), snapshot, shard-map, slowlog.
#include <cstdio>
#include <string>
#include <vector>

#include "net/protocol/json_reply.h"
#include "tools/cli/cli_args.h"
#include "tools/cli/cli_command.h"
#include "tools/cli/cli_render.h"

namespace relgraph::cli {
namespace {

using net::Opcode;
using net::RelationCode;

constexpr const char* kSlowlogUsage = "slowlog [COUNT] [--reset]";

// slowlog [COUNT] [--reset]: the newest COUNT entries (all without it), newest first.
Result<std::string> Slowlog(net::Client& c, const std::vector<std::string>& w, bool json) {
  uint64_t count = 0;
  bool reset = false;
  for (size_t i = 1; i < w.size(); ++i) {
    if (w[i] == "--reset") {
      reset = true;
      continue;
    }
    auto n = ParseU64(w[i], "count");
    if (!n.ok() || count != 0) return Usage(kSlowlogUsage);
    if (*n > 65535) return OutOfRange("count", w[i], 65535);
    count = *n;
  }
  auto r = c.Slowlog(static_cast<uint16_t>(count), reset);
  if (!r.ok()) return r.status();
  Rendered o;
  o.AddInt("threshold_us", r->threshold_us);
  o.Add("max_len", uint64_t{r->max_len});
  if (!json) {
    std::string out = o.Text();
    for (const net::SlowlogEntry& e : r->entries) {
      out += "#" + std::to_string(e.id) + " at " + std::to_string(e.start_ms) + " ms, " +
             std::to_string(e.duration_us) + " us, " + e.client + ": " + e.command +
             (e.args.empty() ? "" : " " + e.args) + "\n";
    }
    return out;
  }
  std::string entries = "[";
  for (const net::SlowlogEntry& e : r->entries) {
    Rendered x;
    x.Add("id", e.id);
    x.AddInt("start_ms", e.start_ms);
    x.Add("duration_us", e.duration_us);
    x.AddText("command", e.command);
    x.AddText("args", e.args);
    x.AddText("client", e.client);
    std::string one = x.Json();
    one.pop_back();  // its newline
    entries += (entries.size() > 1 ? "," : "") + one;
  }
  o.Add("entries", entries + "]");
  return o.Json();
}

}  // namespace

void AddAdminCommands(CommandMap* m) {
  AddCommands(m, {
      {Opcode::kPing,
       {"ping", 1,
        [](net::Client& c, const auto&, bool json) -> Result<std::string> {
          RELGRAPH_RETURN_IF_ERROR(c.Ping());
          return std::string(json ? "{\"pong\":true}\n" : "pong\n");
        }}},
      {Opcode::kInfo,
       {"info", 1,
        [](net::Client& c, const auto&, bool json) {
          // The same fields and shapes as the HTTP API's (net/protocol/json_reply.h).
          return Render<net::InfoReply>(c.Info(), json, [](Rendered& o, const auto& r) {
            for (auto& [name, value] : net::InfoJsonFields(r)) o.Add(name, value);
          });
        }}},
      {Opcode::kSnapshot,
       {"snapshot", 1,
        [](net::Client& c, const auto&, bool json) {
          return Render<net::SnapshotReply>(c.Snapshot(), json, [](Rendered& o, const auto& r) {
            o.Add("lsn", r.lsn);
            o.Add("edges", r.edges);
            o.Add("file_bytes", r.file_bytes);
            o.AddInt("created_ms", r.created_ms);
          });
        }}},
      {Opcode::kShardMap,
       {"shard-map", 1,
        [](net::Client& c, const auto&, bool json) -> Result<std::string> {
          auto r = c.Call(net::ShardMapRequest{});
          if (!r.ok()) return r.status();
          if (!json) return r->map;
          Rendered o;
          o.AddText("map", r->map);
          return o.Json();
        }}},
      {Opcode::kSlowlog, {kSlowlogUsage, 1, Slowlog}},
  });
}

}  // namespace relgraph::cli
