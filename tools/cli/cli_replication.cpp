// relgraph-cli's replication commands: promote a replica, show the group (docs/replication.md).
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

void AddReplicationCommands(CommandMap* m) {
  AddCommands(m, {
      {Opcode::kPromote,
       {"promote [--force]", 1,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          const bool force = w.size() == 2 && w[1] == "--force";
          if (w.size() > 2 || (w.size() == 2 && !force)) return Usage("promote [--force]");
          return Render<net::PromoteReply>(c.Promote(force), json, [](Rendered& o, const auto& r) {
            o.Add("epoch", r.epoch);
            o.Add("epoch_id", r.epoch_id);
            o.Add("first_lsn", r.first_lsn);
          });
        }}},
      {Opcode::kReplicaOf,
       {"replica-of HOST:PORT [--resync]", 2,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          const bool resync = w.size() == 3 && w[2] == "--resync";
          if (w.size() > 3 || (w.size() == 3 && !resync)) {
            return Usage("replica-of HOST:PORT [--resync]");
          }
          auto r = c.Call(net::ReplicaOfRequest{w[1], resync});
          if (!r.ok()) return r.status();
          Rendered o;
          o.AddText("replica_of", w[1]);
          return json ? o.Json() : o.Text();
        }}},
      {Opcode::kPosition,
       {"position", 1,
        [](net::Client& c, const auto&, bool json) -> Result<std::string> {
          auto r = c.Call(net::PositionRequest{});
          if (!r.ok()) return r.status();
          Rendered o;
          o.AddText("role", r->role == net::ReplicationRole::kReplica ? "replica" : "primary");
          o.Add("epoch", r->epoch);
          o.Add("applied_lsn", r->applied_lsn);
          o.Add("durable_lsn", r->durable_lsn);
          return json ? o.Json() : o.Text();
        }}},
      {Opcode::kReplication,
       {"replication", 1,
        [](net::Client& c, const auto&, bool json) -> Result<std::string> {
          auto r = c.Replication();
          if (!r.ok()) return r.status();
          if (json) return net::ToJson(*r) + "\n";  // as over HTTP (json_codec.h)
          Rendered o;
          o.AddText("role", r->role == net::ReplicationRole::kReplica ? "replica" : "primary");
          if (!r->primary.empty()) o.AddText("primary", r->primary);
          o.AddText("state", r->state);
          if (!r->message.empty()) o.AddText("message", r->message);
          o.Add("epoch", r->epoch);
          o.Add("epoch_id", r->epoch_id);
          o.Add("applied_lsn", r->applied_lsn);
          o.Add("primary_lsn", r->primary_lsn);
          o.Add("lag_ms", r->lag_ms);
          o.Add("sync_replicas", r->sync_replicas);
          std::string text, list;
          for (const net::ReplicaEntry& e : r->replicas) {
            Rendered x;
            x.AddText("name", e.name);
            x.Add("applied_lsn", e.applied_lsn);
            x.Add("durable_lsn", e.durable_lsn);
            x.Add("ack_age_ms", e.ack_age_ms);
            std::string j = x.Json();
            list += (list.empty() ? "" : ",") + j.substr(0, j.size() - 1);
            text += "replica " + e.name + ": applied " + std::to_string(e.applied_lsn) +
                    ", durable " + std::to_string(e.durable_lsn) + ", acked " +
                    std::to_string(e.ack_age_ms) + " ms ago\n";
          }
          o.Add("replicas", "[" + list + "]");
          std::string out = json ? o.Json() : o.Text();
          if (!json) out = out.substr(0, out.rfind("replicas: ")) + text;
          return out;
        }}},
  });
}

}  // namespace relgraph::cli
