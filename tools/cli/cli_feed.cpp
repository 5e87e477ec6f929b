// relgraph-cli's feed commands: publish, delete-post, mute, hide and their lists (the
// timeline and user-posts pages are RunCommand's, through ParseFeedQuery).
#include <optional>
#include <string>
#include <vector>

#include "tools/cli/cli_args.h"
#include "tools/cli/cli_command.h"
#include "tools/cli/cli_render.h"

namespace relgraph::cli {
namespace {

using net::Opcode;
using net::RelationCode;

// mute/unmute/hide/unhide: two ids, the reply says whether anything changed.
Command ToggleCommand(const char* usage,
                      Result<bool> (net::Client::*method)(uint64_t, uint64_t, bool), bool on) {
  return {usage, 3, [method, on](net::Client& c, const auto& w, bool json) -> Result<std::string> {
            auto ids = Ids(w, 1);
            if (!ids.ok()) return ids.status();
            return Render<bool>((c.*method)((*ids)[0], (*ids)[1], on), json,
                                [](Rendered& o, const bool& r) { o.AddBool("changed", r); });
          }};
}

// mutes/hides: one id, a list of users.
Command ListCommand(const char* usage,
                    Result<std::vector<uint64_t>> (net::Client::*method)(uint64_t)) {
  return {usage, 2, [method](net::Client& c, const auto& w, bool json) -> Result<std::string> {
            auto ids = Ids(w, 1);
            if (!ids.ok()) return ids.status();
            return Render<std::vector<uint64_t>>(
                (c.*method)((*ids)[0]), json,
                [](Rendered& o, const std::vector<uint64_t>& r) { o.Add("users", JsonList(r)); });
          }};
}

}  // namespace

void AddFeedCommands(CommandMap* m) {
  AddCommands(m, {
      {Opcode::kPublish,
       {"publish AUTHOR POST [KIND] [TS_MS]", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids({w.begin(), w.begin() + 3}, 1);
          if (!ids.ok()) return ids.status();
          uint64_t kind = 0;
          std::optional<int64_t> ts;
          if (w.size() > 3) {
            auto k = ParseU64(w[3], "kind");
            if (!k.ok()) return k.status();
            if (*k > 255) return OutOfRange("kind", w[3], 255);
            kind = *k;
          }
          if (w.size() > 4) {
            auto t = ParseI64(w[4], "time");
            if (!t.ok()) return t.status();
            ts = *t;
          }
          return Render<net::PublishReply>(
              c.Publish((*ids)[0], (*ids)[1], static_cast<uint8_t>(kind), ts), json,
              [](Rendered& o, const auto& r) {
                o.AddInt("ts", r.ts);
                o.AddBool("retained", r.retained);
                o.Add("evicted", r.evicted);
              });
        }}},
      {Opcode::kDeletePost,
       {"delete-post AUTHOR POST", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          RELGRAPH_RETURN_IF_ERROR(c.DeletePost((*ids)[0], (*ids)[1]));
          return std::string(json ? "{\"deleted\":true}\n" : "deleted: true\n");
        }}},
      {Opcode::kMute, ToggleCommand("mute USER OTHER", &net::Client::Mute, true)},
      {Opcode::kUnmute, ToggleCommand("unmute USER OTHER", &net::Client::Mute, false)},
      {Opcode::kHide, ToggleCommand("hide AUTHOR FROM_USER", &net::Client::Hide, true)},
      {Opcode::kUnhide, ToggleCommand("unhide AUTHOR FROM_USER", &net::Client::Hide, false)},
      {Opcode::kMutes, ListCommand("mutes USER", &net::Client::Mutes)},
      {Opcode::kHides, ListCommand("hides AUTHOR", &net::Client::Hides)},
  });
}

}  // namespace relgraph::cli
