#include "tools/cli/cli_commands.h"

#include <algorithm>

#include "tools/cli/cli_args.h"
#include "tools/cli/cli_command.h"
#include "tools/cli/cli_render.h"

namespace relgraph::cli {

Status UsageError(const std::string& message) {
  return Status(Code::kInvalidArgument, message, kUsageErrorDetail);
}

bool IsUsageError(const Status& status) {
  return status.code() == Code::kInvalidArgument && status.detail() == kUsageErrorDetail;
}

std::string CliWord(net::Opcode opcode) {
  std::string word(net::OpcodeName(opcode));
  std::replace(word.begin(), word.end(), '_', '-');
  return word;
}

void AddCommands(CommandMap* m, std::initializer_list<std::pair<net::Opcode, Command>> rows) {
  for (const auto& [opcode, command] : rows) {
    Command& c = (*m)[CliWord(opcode)] = command;
    c.opcode = opcode;
  }
}

const CommandMap& Commands() {
  static const CommandMap commands = [] {
    CommandMap m;
    AddAdminCommands(&m);
    AddGraphCommands(&m);
    AddFeedCommands(&m);
    AddAccessCommands(&m);
    AddStreamCommands(&m);
    AddReplicationCommands(&m);
    return m;
  }();
  return commands;
}

bool IsListPage(const std::string& name) {
  return std::any_of(std::begin(kUserPages), std::end(kUserPages),
                     [&](net::Opcode op) { return CliWord(op) == name; });
}

std::vector<CliCommand> CliCommands() {
  std::vector<CliCommand> out;
  for (const auto& [word, c] : Commands()) out.push_back({c.opcode, word});
  for (net::Opcode op : kUserPages) out.push_back({op, CliWord(op)});
  for (net::Opcode op : kPostPages) out.push_back({op, CliWord(op)});
  out.push_back({net::Opcode::kSubscribe, "subscribe"});  // cli_main.cpp follows it
  return out;
}

std::span<const CliLess> CliLessRequests() {
  static constexpr CliLess kCliLess[] = {
      {net::Opcode::kHello, "the handshake: relgraph-cli sends it on every connection"},
      {net::Opcode::kReplicate,
       "a replica's stream of its primary's WAL: relgraphd --replica-of runs it"},
      {net::Opcode::kReplicaAck,
       "a replica's acknowledgements to its primary; `replication` shows them"},
  };
  return kCliLess;
}

Result<std::string> RunCommand(net::Client& client, const std::vector<std::string>& words,
                               bool json) {
  if (words.empty()) return UsageError("no command (try 'help')");
  const std::string& name = words[0];
  if (IsListPage(name)) return ListPage(client, words, json);
  if (name == "timeline" || name == "user-posts") {
    auto q = ParseFeedQuery(words, name + kFeedUsage);
    if (!q.ok()) return q.status();
    auto page = name == "timeline" ? client.Timeline(*q) : client.UserPosts(*q);
    if (!page.ok()) return page.status();
    return RenderFeed(*page, words, json);
  }
  auto it = Commands().find(name);
  if (it == Commands().end()) {
    return UsageError("unknown command '" + name + "' (try 'help')");
  }
  if (words.size() < it->second.min_words) return Usage(it->second.usage);
  return it->second.run(client, words, json);
}

std::string CommandUsage() {
  std::string out;
  for (const auto& [name, c] : Commands()) out += std::string("  ") + c.usage + "\n";
  for (const char* list : {"following", "fans", "friends", "blocks", "requests"}) {
    out += std::string("  ") + list + kPageUsage + "\n";
  }
  for (const char* list : {"timeline", "user-posts"}) {
    out += std::string("  ") + list + kFeedUsage + "\n";
  }
  out += std::string("  ") + kSubscribeUsage + "\n";
  out += "  (timeline and user-posts --kinds: post kinds, numbers 0..63; subscribe --kinds: event\n"
         "   kinds by name, follow,publish,..., or by number, as docs/protocol.md lists them)\n";
  out += "  with --cluster: map | barrier (and every command about a user)\n";
  return out;
}

std::string FormatError(const Status& status, bool json) {
  if (!json) return "error: " + status.ToString() + "\n";
  Rendered r;
  r.AddText("error", CodeName(status.code()));
  r.AddText("message", status.message());
  if (status.detail() != 0 && !IsUsageError(status)) r.AddInt("detail", status.detail());
  return r.Json();
}

}  // namespace relgraph::cli
