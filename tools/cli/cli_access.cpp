// relgraph-cli's commands for blocks, private accounts and follow requests (docs/access.md;
// the blocks and requests pages are ListPage's).
#include <string>
#include <vector>

#include "tools/cli/cli_args.h"
#include "tools/cli/cli_command.h"
#include "tools/cli/cli_render.h"

namespace relgraph::cli {
namespace {

using net::Opcode;
using net::RelationCode;

// unblock/reject/withdraw: two ids, the reply says whether anything changed.
Command PairCommand(const char* usage, Result<bool> (net::Client::*method)(uint64_t, uint64_t)) {
  return {usage, 3, [method](net::Client& c, const auto& w, bool json) -> Result<std::string> {
            auto ids = Ids(w, 1);
            if (!ids.ok()) return ids.status();
            return Render<bool>((c.*method)((*ids)[0], (*ids)[1]), json,
                                [](Rendered& o, const bool& r) { o.AddBool("changed", r); });
          }};
}

}  // namespace

void AddAccessCommands(CommandMap* m) {
  AddCommands(m, {
      {Opcode::kBlock,
       {"block USER BLOCKED", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          return Render<net::BlockReply>(c.Block((*ids)[0], (*ids)[1]), json,
                                         [](Rendered& o, const auto& r) {
                                           o.AddBool("created", r.created);
                                           o.AddInt("ts", r.ts);
                                           o.AddBool("unfollowed", (r.removed & 1) != 0);
                                           o.AddBool("lost_follower", (r.removed & 2) != 0);
                                           o.AddBool("dropped_request", (r.removed & 4) != 0);
                                         });
        }}},
      {Opcode::kUnblock, PairCommand("unblock USER BLOCKED", &net::Client::Unblock)},
      {Opcode::kReject, PairCommand("reject USER REQUESTER", &net::Client::Reject)},
      {Opcode::kWithdraw, PairCommand("withdraw REQUESTER TARGET", &net::Client::Withdraw)},
      {Opcode::kApprove,
       {"approve USER REQUESTER", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          return Render<net::FollowReply>(c.Approve((*ids)[0], (*ids)[1]), json,
                                          [](Rendered& o, const auto& r) {
                                            o.AddBool("created", r.created);
                                            o.Add("relation", Rel(r.relation));
                                            o.AddInt("followed_at", r.followed_at);
                                          });
        }}},
      {Opcode::kSetPrivate,
       {"set-private USER on|off", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids({w.begin(), w.begin() + 2}, 1);
          if (!ids.ok()) return ids.status();
          if (w[2] != "on" && w[2] != "off") return Usage("set-private USER on|off");
          return Render<net::SetPrivateReply>(c.SetPrivate((*ids)[0], w[2] == "on"), json,
                                              [](Rendered& o, const auto& r) {
                                                o.AddBool("changed", r.changed);
                                                o.Add("approved", r.approved);
                                                o.AddInt("ts", r.ts);
                                              });
        }}},
      {Opcode::kIsPrivate,
       {"is-private USER", 2,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          return Render<bool>(c.IsPrivate((*ids)[0]), json,
                              [](Rendered& o, const bool& r) { o.AddBool("private", r); });
        }}},
  });
}

}  // namespace relgraph::cli
