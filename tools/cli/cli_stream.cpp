// relgraph-cli's change-stream commands: named cursors (ack, cursors, delete-cursor), the
// snapshot transfer (fetch-snapshot), and subscribe's arguments (the main loop follows it).
#include <sstream>
#include <string>
#include <vector>

#include "net/protocol/json_codec.h"
#include "tools/cli/cli_args.h"
#include "tools/cli/cli_command.h"
#include "tools/cli/cli_render.h"

namespace relgraph::cli {
namespace {

using net::Opcode;
using net::RelationCode;

}  // namespace

void AddStreamCommands(CommandMap* m) {
  AddCommands(m, {
      {Opcode::kAck,
       {"ack NAME LSN", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto lsn = ParseU64(w[2], "LSN");
          if (!lsn.ok()) return lsn.status();
          RELGRAPH_RETURN_IF_ERROR(c.Ack(w[1], *lsn));
          return std::string(json ? "{\"acked\":true}\n" : "acked\n");
        }}},
      {Opcode::kCursors,
       {"cursors", 1,
        [](net::Client& c, const auto&, bool json) -> Result<std::string> {
          auto list = c.Cursors();
          if (!list.ok()) return list.status();
          if (json) return net::ToJson(net::CursorsReply{*list}) + "\n";  // as over HTTP
          std::string out;
          for (const net::CursorEntry& k : *list) {
            out += k.name + " " + std::to_string(k.acked_lsn) + " at " +
                   std::to_string(k.acked_ms) + (k.expired ? " (expired)" : "") + "\n";
          }
          return out;
        }}},
      {Opcode::kDeleteCursor,
       {"delete-cursor NAME", 2,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          RELGRAPH_RETURN_IF_ERROR(c.DeleteCursor(w[1]));
          return std::string(json ? "{\"deleted\":true}\n" : "deleted\n");
        }}},
      {Opcode::kFetchSnapshot,
       {"fetch-snapshot FILE", 2,
        [](net::Client& c, const auto& w, bool json) {
          return Render<net::FetchSnapshotReply>(c.FetchSnapshot(w[1]), json,
                                                 [&](Rendered& o, const auto& r) {
                                                   o.Add("lsn", r.lsn);
                                                   o.Add("file_bytes", r.file_bytes);
                                                   o.AddText("file", w[1]);
                                                 });
        }}},
  });
}

Result<SubscribeArgs> ParseSubscribe(const std::vector<std::string>& words) {
  SubscribeArgs args;
  args.options.from = net::SubscribeFrom::kNow;
  for (size_t i = 1; i < words.size(); ++i) {
    const auto [key, value] = Option(words[i]);
    if (key == "--from" && value == "now") {
      args.options.from = net::SubscribeFrom::kNow;
      args.options.lsn = 0;
    } else if (key == "--from") {
      auto lsn = ParseU64(value, "LSN");
      if (!lsn.ok()) return lsn.status();
      args.options.from = net::SubscribeFrom::kLsn;
      args.options.lsn = *lsn;
    } else if (key == "--kinds") {  // "": all
      args.options.kinds = 0;
      std::stringstream list(value);
      for (std::string k; std::getline(list, k, ',');) {
        uint32_t bit = 0;
        if (!k.empty() && k.find_first_not_of("0123456789") == std::string::npos) {
          auto n = ParseU64(k, "event kind");  // its number in docs/protocol.md
          if (!n.ok()) return n.status();
          if (*n > 31 || ((net::kAllEventKinds >> *n) & 1) == 0) {
            return UsageError("event kind " + k + " is not one (docs/protocol.md, \"The change stream\")");
          }
          bit = uint32_t{1} << *n;
        } else {
          auto mask = net::ParseEventKinds(k);
          if (!mask.ok()) return UsageError(mask.status().message());
          bit = *mask;
        }
        args.options.kinds |= bit;
      }
    } else if (key == "--name") {
      args.options.name = value;
    } else if (key == "--count") {
      auto n = ParseU64(value, "count");
      if (!n.ok()) return n.status();
      args.count = *n;
    } else {
      return Usage(kSubscribeUsage);
    }
  }
  return args;
}

}  // namespace relgraph::cli
