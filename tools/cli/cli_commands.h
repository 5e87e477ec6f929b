// relgraph-cli's commands: words in, one request through net::Client, readable text or JSON out.
// Each family's commands live in cli_<family>.cpp (cli_command.h), the cluster's in
// cli_cluster.cpp; this is what cli_main.cpp and the tests use.
//
// Thread-safety: pure functions over a caller-owned Client.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "net/client/client.h"
#include "net/client/event_format.h"
#include "net/client/subscriber.h"
#include "net/cluster/cluster_client.h"
#include "storage/status.h"

namespace relgraph::cli {

// Runs one command (`words[0]` is its name, e.g. "follow", "fans") and returns what to print.
// Errors: a usage error (IsUsageError; the message shows the usage line or names the bad
// word), or the server's.
Result<std::string> RunCommand(net::Client& client, const std::vector<std::string>& words,
                               bool json);

// Runs one command through a cluster (relgraph-cli --cluster; docs/cluster.md). A command
// about users goes to the shard that owns its first user id, following `moved`; a page whose
// viewer lives elsewhere and known-followers across shards are completed by ClusterClient.
// Two commands are the cluster's own: `map` prints the shard map, `barrier` waits until every
// change is applied everywhere. A command about no user (info, snapshot, cursors, ...) is
// refused with kInvalidArgument: ask a shard directly (-p).
Result<std::string> RunClusterCommand(net::ClusterClient& cluster,
                                      const std::vector<std::string>& words, bool json);

// Every command with its arguments, one per line.
std::string CommandUsage();

// The requests of the command table (net/protocol/command_table.h) relgraph-cli has a command
// for, and the word that runs it (the opcode's name, '-' for '_'); and those it deliberately
// has none for, each with why. Together they are every request of the table, each once
// (tests/tools/cli_test.cpp checks).
struct CliCommand {
  net::Opcode opcode;
  std::string word;
};
std::vector<CliCommand> CliCommands();
struct CliLess {
  net::Opcode opcode;
  std::string_view why;
};
std::span<const CliLess> CliLessRequests();

// `subscribe [--from=LSN|now] [--kinds=EVENT,...] [--count=N] [--name=CURSOR]`, which follows
// the change stream like `tail -f` (the main loop runs net::Subscribe; these are its pieces).
// With --name it resumes from that cursor when it exists (else from --from) and ACKs it as
// it prints, so the next run goes on where this one stopped.
struct SubscribeArgs {
  net::SubscriberOptions options;  // without the client options
  uint64_t count = 0;              // stop after this many events; 0: never
};
inline constexpr const char* kSubscribeUsage =
    "subscribe [--from=LSN|now] [--kinds=EVENT,EVENT,...] [--count=N] [--name=CURSOR]";
Result<SubscribeArgs> ParseSubscribe(const std::vector<std::string>& words);

// The CLI's own errors (bad usage, a word that is not a number or out of range, an unknown
// command) are kInvalidArgument with this detail, which no server sends: relgraph-cli exits 2
// on them and 1 on the server's errors.
inline constexpr int64_t kUsageErrorDetail = -1;
Status UsageError(const std::string& message);
bool IsUsageError(const Status& status);

// The error text for a failed command: "error: CODE: message" or {"error":...} in JSON.
std::string FormatError(const Status& status, bool json);

}  // namespace relgraph::cli
