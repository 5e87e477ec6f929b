// relgraph-cli --cluster: each command sent to the shard that owns its first user, and the
// cluster's own commands, map and barrier (docs/cluster.md).
#include <string>
#include <vector>

#include "tools/cli/cli_args.h"
#include "tools/cli/cli_command.h"
#include "tools/cli/cli_render.h"

namespace relgraph::cli {

Result<std::string> RunClusterCommand(net::ClusterClient& cluster,
                                      const std::vector<std::string>& words, bool json) {
  if (words.empty()) return UsageError("no command (try 'help')");
  const std::string& name = words[0];
  if (name == "map") {
    const net::ShardMap& m = cluster.map();
    if (!json) return net::EncodeShardMap(m) + "version " + std::to_string(m.version) + "\n";
    Rendered o;
    o.Add("version", m.version);
    o.Add("buckets", m.buckets);
    std::string shards;
    for (const net::ShardInfo& s : m.shards) {
      Rendered x;
      x.Add("id", s.id);
      x.AddText("address", s.address);
      std::string j = x.Json();
      shards += (shards.empty() ? "" : ",") + j.substr(0, j.size() - 1);
    }
    o.Add("shards", "[" + shards + "]");
    return o.Json();
  }
  if (name == "barrier") {
    RELGRAPH_RETURN_IF_ERROR(cluster.Barrier());
    return std::string(json ? "{\"quiet\":true}\n" : "quiet: every change is applied\n");
  }
  if (IsListPage(name)) return ListPage(cluster, words, json);
  if (name == "known-followers" && words.size() >= 3) return KnownFollowers(cluster, words, json);
  // Every other command names its user first (the follower, the author, the reader, ...).
  auto user = words.size() >= 2 ? ParseU64(words[1], "user") : UsageError("");
  if (!user.ok()) {
    const bool known = Commands().contains(name) || name == "timeline" || name == "user-posts" ||
                       name == "blocks" || name == "requests";
    if (!known) return UsageError("unknown command '" + name + "' (try 'help')");
    return UsageError("'" + name +
                                   "' names no user first: in a cluster, ask a shard "
                                   "(relgraph-cli -p PORT), or use map or barrier");
  }
  return cluster.OnOwnerOf<std::string>(
      *user, [&](net::Client& shard) { return RunCommand(shard, words, json); });
}

}  // namespace relgraph::cli
