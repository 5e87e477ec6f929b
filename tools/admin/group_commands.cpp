#include "tools/admin/group_commands.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <thread>

#include "net/cluster/nats_link.h"
#include "net/group/group_store.h"

namespace relgraph::admin {
namespace {

constexpr const char* kUsage = R"(usage: relgraph-admin group COMMAND --group=NAME [FLAGS] [--help]

A replication group with automatic failover (docs/replication.md, "Automatic failover").

  group status --group=NAME [--json]
                            the lease (holder, epoch, counted members, age) and each
                            member's report (role, epoch, LSNs, lag behind the primary)
  group switchover --group=NAME [--to=HOST:PORT] [--timeout-ms=10000]
                            hand the lease to a caught-up member (the named one, else the
                            most advanced), for an upgrade; waits until it is the primary

--nats=URL[,URL...] defaults to nats://127.0.0.1:4222; --nats-tls-ca=FILE, --nats-tls-cert=FILE
and --nats-tls-key=FILE (or a tls:// URL) reach a NATS server that wants TLS.
Exit status: 0 on success, 1 on failure, 2 on a usage error.
)";

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

int PrintStatus(net::GroupStore& store, const std::string& group, bool json, std::ostream& out,
                std::ostream& err) {
  auto lease = store.ReadLease(group);
  if (!lease.ok() && lease.status().code() != Code::kNotFound) {
    err << "relgraph-admin group status: " << lease.status().message() << "\n";
    return 1;
  }
  auto members = store.Members(group);
  if (!members.ok()) {
    err << "relgraph-admin group status: " << members.status().message() << "\n";
    return 1;
  }
  std::sort(members->begin(), members->end(),
            [](const auto& a, const auto& b) { return a.value.address < b.value.address; });
  const int64_t now = WallMs();
  uint64_t primary_lsn = 0;
  for (const auto& m : *members) {
    if (lease.ok() && m.value.address == lease->value.holder) primary_lsn = m.value.applied_lsn;
  }
  if (json) {
    out << "{\"group\":" << Quote(group);
    if (lease.ok()) {
      const net::GroupLease& l = lease->value;
      out << ",\"lease\":{\"holder\":" << Quote(l.holder) << ",\"revision\":" << lease->revision
          << ",\"epoch\":" << l.epoch << ",\"epoch_id\":" << l.epoch_id
          << ",\"sync_replicas\":" << l.sync_replicas << ",\"renewals\":" << l.renewals
          << ",\"age_ms\":" << std::max<int64_t>(0, now - l.renewed_ms)
          << ",\"released\":" << (l.released ? "true" : "false") << ",\"members\":[";
      for (size_t i = 0; i < l.members.size(); ++i) out << (i ? "," : "") << Quote(l.members[i]);
      out << "]}";
    } else {
      out << ",\"lease\":null";
    }
    out << ",\"members\":[";
    for (size_t i = 0; i < members->size(); ++i) {
      const net::GroupMember& m = (*members)[i].value;
      out << (i ? "," : "") << "{\"address\":" << Quote(m.address) << ",\"role\":" << Quote(m.role)
          << ",\"state\":" << Quote(m.state) << ",\"epoch\":" << m.epoch
          << ",\"applied_lsn\":" << m.applied_lsn << ",\"durable_lsn\":" << m.durable_lsn
          << ",\"lag_records\":" << (primary_lsn > m.applied_lsn ? primary_lsn - m.applied_lsn : 0)
          << ",\"link_alive\":" << (m.link_alive ? "true" : "false")
          << ",\"report_age_ms\":" << std::max<int64_t>(0, now - m.reported_ms) << "}";
    }
    out << "]}\n";
    return 0;
  }
  out << "group " << group << "\n";
  if (lease.ok()) {
    const net::GroupLease& l = lease->value;
    out << "  primary " << l.holder << (l.released ? " (released its lease)" : "") << ", epoch "
        << l.epoch << ", lease revision " << lease->revision << " renewed "
        << std::max<int64_t>(0, now - l.renewed_ms) << " ms ago, sync_replicas " << l.sync_replicas
        << "\n  counted members:";
    for (const std::string& m : l.members) out << " " << m;
    out << (l.members.empty() ? " none\n" : "\n");
  } else {
    out << "  no lease: no primary was elected yet\n";
  }
  for (const auto& v : *members) {
    const net::GroupMember& m = v.value;
    out << "  " << m.address << "  " << m.role << " (" << m.state << "), epoch " << m.epoch
        << ", applied " << m.applied_lsn << ", durable " << m.durable_lsn << ", lag "
        << (primary_lsn > m.applied_lsn ? primary_lsn - m.applied_lsn : 0) << " records"
        << (m.role == "replica" ? (m.link_alive ? ", hears its primary" : ", hears no primary")
                                : "")
        << ", reported " << std::max<int64_t>(0, now - m.reported_ms) << " ms ago\n";
  }
  return 0;
}

int Switchover(net::GroupStore& store, const std::string& group, const std::string& to,
               std::chrono::milliseconds timeout, std::ostream& out, std::ostream& err) {
  auto before = store.ReadLease(group);
  if (!before.ok()) {
    err << "relgraph-admin group switchover: " << before.status().message() << "\n";
    return 1;
  }
  const std::string from = before->value.holder;
  if (to == from) {
    err << "relgraph-admin group switchover: " << to << " is the primary already\n";
    return 1;
  }
  const auto started = std::chrono::steady_clock::now();
  if (auto s = store.PutSwitchover(group, {to, WallMs()}); !s.ok()) {
    err << "relgraph-admin group switchover: " << s.message() << "\n";
    return 1;
  }
  while (std::chrono::steady_clock::now() - started < timeout) {
    auto now = store.ReadLease(group);
    if (now.ok() && now->value.holder != from && now->value.epoch > before->value.epoch &&
        !now->value.handover) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - started)
                          .count();
      out << "switched over from " << from << " to " << now->value.holder << " (epoch "
          << now->value.epoch << ") in " << ms << " ms\n";
      return 0;
    }
    auto pending = store.ReadSwitchover(group);
    // The primary clears the request after it wrote the lease: read the lease again.
    auto after = store.ReadLease(group);
    if (pending.ok() && !pending->has_value() && after.ok() && after->value.holder == from) {
      err << "relgraph-admin group switchover: the primary " << from
          << " declined it (its log says why: the member named must stream from it and be "
             "counted, and catch up within 1 s)\n";
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  store.DeleteSwitchover(group).IgnoreError();
  err << "relgraph-admin group switchover: no switchover within " << timeout.count() << " ms\n";
  return 1;
}

}  // namespace

int GroupCommand(const std::vector<std::string>& positional,
                 const std::map<std::string, std::string>& flags, bool help, std::ostream& out,
                 std::ostream& err) {
  if (help) {
    out << kUsage;
    return 0;
  }
  auto usage = [&](const std::string& why) {
    err << "relgraph-admin group: " << why << " (see relgraph-admin group --help)\n";
    return 2;
  };
  if (positional.size() != 1) return usage("expected status or switchover");
  const std::string& what = positional[0];
  if (what != "status" && what != "switchover")
    return usage("unknown group command '" + what + "'");
  auto flag = [&](const char* name) {
    auto it = flags.find(name);
    return it == flags.end() ? std::string() : it->second;
  };
  net::NatsTlsOptions nats_tls;
  for (const auto& [name, value] : flags) {
    auto tls = net::ApplyNatsTlsFlag(value.empty() ? name : name + "=" + value, &nats_tls);
    if (!tls.ok()) return usage(tls.status().message());
    if (*tls) continue;
    const bool known = name == "--nats" || name == "--group" ||
                       (what == "status" && name == "--json") ||
                       (what == "switchover" && (name == "--to" || name == "--timeout-ms"));
    if (!known) return usage("unknown flag " + name + " for " + what);
  }
  const std::string group = flag("--group");
  if (Status s = net::CheckGroupName(group); !s.ok()) return usage("--group: " + s.message());
  uint64_t timeout_ms = 10000;
  if (const std::string t = flag("--timeout-ms"); !t.empty()) {
    if (std::from_chars(t.data(), t.data() + t.size(), timeout_ms).ptr != t.data() + t.size()) {
      return usage("--timeout-ms takes a number, not '" + t + "'");
    }
  }
  net::SetNatsTls(nats_tls);
  net::GroupStoreOptions o;
  o.nats_urls = flag("--nats").empty() ? "nats://127.0.0.1:4222" : flag("--nats");
  o.op_timeout = std::chrono::milliseconds(2000);
  auto store = net::GroupStore::Connect(o);
  if (!store.ok()) {
    err << "relgraph-admin group " << what << ": " << store.status().message() << "\n";
    return 1;
  }
  if (what == "status") return PrintStatus(**store, group, flags.contains("--json"), out, err);
  return Switchover(**store, group, flag("--to"), std::chrono::milliseconds(timeout_ms), out, err);
}

}  // namespace relgraph::admin
