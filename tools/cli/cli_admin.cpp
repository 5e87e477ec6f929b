// relgraph-cli's session and admin commands: ping, info (values by name where they are
// modes or versions), snapshot.
#include <cstdio>
#include <string>
#include <vector>

#include "tools/cli/cli_args.h"
#include "tools/cli/cli_command.h"
#include "tools/cli/cli_render.h"

namespace relgraph::cli {
namespace {

using net::Opcode;
using net::RelationCode;

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
          return Render<net::InfoReply>(c.Info(), json, [](Rendered& o, const auto& r) {
            for (const auto& f : r.fields) {
              if (f.name == "durability") {
                o.AddText(f.name, net::DurabilityCodeName(f.value));  // a mode, not a count
              } else if (f.name == "server_version") {  // major << 32 | minor << 16 | patch
                o.AddText(f.name, std::to_string(f.value >> 32) + "." +
                                      std::to_string((f.value >> 16) & 0xffff) + "." +
                                      std::to_string(f.value & 0xffff));
              } else if (f.name == "server_build") {  // a commit's first 16 hex digits
                char hex[17];
                std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(f.value));
                o.AddText(f.name, f.value == 0 ? "unknown" : hex);
              } else {
                o.Add(f.name, f.value);
              }
            }
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
  });
}

}  // namespace relgraph::cli
