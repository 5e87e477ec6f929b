// relgraph-cli's graph commands: follow, unfollow, relation(s), counts, known-followers,
// remove-user (the pages, following, fans and friends, are ListPage's).
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

}  // namespace

void AddGraphCommands(CommandMap* m) {
  AddCommands(m, {
      {Opcode::kFollow,
       {"follow FOLLOWER FOLLOWEE [TS_MS]", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          std::optional<int64_t> ts;
          if (w.size() > 3) {
            auto t = ParseI64(w[3], "time");
            if (!t.ok()) return t.status();
            ts = *t;
            ids = Ids({w.begin(), w.begin() + 3}, 1);
          }
          if (!ids.ok()) return ids.status();
          return Render<net::FollowReply>(c.Follow((*ids)[0], (*ids)[1], ts), json,
                                          [](Rendered& o, const auto& r) {
                                            o.AddBool("created", r.created);
                                            o.Add("relation", Rel(r.relation));
                                            o.AddInt("followed_at", r.followed_at);
                                          });
        }}},
      {Opcode::kUnfollow,
       {"unfollow FOLLOWER FOLLOWEE", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          return Render<bool>(c.Unfollow((*ids)[0], (*ids)[1]), json,
                              [](Rendered& o, const bool& r) { o.AddBool("removed", r); });
        }}},
      {Opcode::kRelation,
       {"relation A B", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          return Render<RelationCode>(
              c.Relation((*ids)[0], (*ids)[1]), json,
              [](Rendered& o, const RelationCode& r) { o.Add("relation", Rel(r)); });
        }}},
      {Opcode::kRelations,
       {"relations A B [B ...]", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          const std::vector<uint64_t> others(ids->begin() + 1, ids->end());
          return Render<std::vector<RelationCode>>(
              c.Relations((*ids)[0], others), json,
              [&](Rendered& o, const std::vector<RelationCode>& r) {
                for (size_t i = 0; i < r.size(); ++i) {
                  o.Add(std::to_string(others[i]), Rel(r[i]));
                }
              });
        }}},
      {Opcode::kCounts,
       {"counts USER", 2,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          return Render<net::CountsReply>(c.Counts((*ids)[0]), json,
                                          [](Rendered& o, const auto& r) {
                                            o.Add("following", r.following);
                                            o.Add("fans", r.fans);
                                            o.Add("friends", r.friends);
                                          });
        }}},
      {Opcode::kKnownFollowers,
       {"known-followers VIEWER TARGET [LIMIT]", 3,
        [](net::Client& c, const auto& w, bool json) { return KnownFollowers(c, w, json); }}},
      {Opcode::kRemoveUser,
       {"remove-user USER", 2,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          return Render<uint64_t>(
              c.RemoveUser((*ids)[0]), json,
              [](Rendered& o, const uint64_t& r) { o.Add("edges_removed", r); });
        }}},
  });
}

}  // namespace relgraph::cli
