// A relgraph-cli command: its opcode (its word is the opcode's name, '-' for '_'), usage
// line, fewest words, and what it runs; each family's file adds its rows to one map. The pages
// (ListPage) and known-followers run through a Client or a ClusterClient alike.
//
// Thread-safety: the map is built once and then only read.
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "net/client/client.h"
#include "net/protocol/protocol.h"
#include "tools/cli/cli_args.h"
#include "tools/cli/cli_render.h"

namespace relgraph::cli {

struct Command {
  const char* usage;
  size_t min_words;
  std::function<Result<std::string>(net::Client&, const std::vector<std::string>&, bool)> run;
  net::Opcode opcode = net::Opcode::kNotice;  // set by AddCommands
};
using CommandMap = std::map<std::string, Command>;

// The word that runs `opcode`'s command: its name with '-' for '_' (remove_user: remove-user).
std::string CliWord(net::Opcode opcode);
// Adds each row under its opcode's word.
void AddCommands(CommandMap* m, std::initializer_list<std::pair<net::Opcode, Command>> rows);

// Each family's commands (cli_<family>.cpp).
void AddAdminCommands(CommandMap* m);
void AddGraphCommands(CommandMap* m);
void AddFeedCommands(CommandMap* m);
void AddAccessCommands(CommandMap* m);
void AddStreamCommands(CommandMap* m);
void AddReplicationCommands(CommandMap* m);
// Every family's, built once.
const CommandMap& Commands();

// The pages of users and of posts: not in Commands(), as they take their own options.
inline constexpr net::Opcode kUserPages[] = {net::Opcode::kFollowing, net::Opcode::kFans,
                                             net::Opcode::kFriends, net::Opcode::kBlocks,
                                             net::Opcode::kRequests};
inline constexpr net::Opcode kPostPages[] = {net::Opcode::kTimeline, net::Opcode::kUserPosts};
inline constexpr const char* kPageUsage =
    " USER [--limit=N] [--offset=N] [--after=TS:USER] [--viewer=V]";
inline constexpr const char* kFeedUsage = " USER [--limit=N] [--after=TS:POST] [--kinds=N,N,...]";

bool IsListPage(const std::string& name);

// known-followers VIEWER TARGET [LIMIT], through a Client or a ClusterClient.
template <typename AnyClient>
Result<std::string> KnownFollowers(AnyClient& c, const std::vector<std::string>& w, bool json) {
  auto ids = Ids(w, 1);
  if (!ids.ok()) return ids.status();
  const uint64_t limit = ids->size() > 2 ? (*ids)[2] : 3;
  if (limit > 65535) return OutOfRange("limit", std::to_string(limit), 65535);
  return Render<net::KnownFollowersReply>(
      c.KnownFollowers((*ids)[0], (*ids)[1], static_cast<uint16_t>(limit)), json,
      [](Rendered& o, const auto& r) {
        o.Add("total", r.total);
        o.Add("users", JsonList(r.users));
      });
}

// following, fans, friends, blocks or requests USER [options], through a Client or a
// ClusterClient.
template <typename AnyClient>
Result<std::string> ListPage(AnyClient& c, const std::vector<std::string>& words, bool json) {
  const std::string& name = words[0];
  auto q = ParsePageQuery(words, name + kPageUsage);
  if (!q.ok()) return q.status();
  if (name == "blocks" || name == "requests") {  // with the whole list's total
    auto page = name == "blocks" ? c.Blocks(*q) : c.Requests(*q);
    if (!page.ok()) return page.status();
    return RenderPage(net::PageReply{std::move(page->entries), page->next}, words, *q, json,
                      page->total);
  }
  auto page = name == "following" ? c.Following(*q) : name == "fans" ? c.Fans(*q) : c.Friends(*q);
  if (!page.ok()) return page.status();
  return RenderPage(*page, words, *q, json);
}

}  // namespace relgraph::cli
