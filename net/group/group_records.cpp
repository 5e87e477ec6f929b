#include "net/group/group_records.h"

#include <charconv>
#include <map>

namespace relgraph::net {
namespace {

using Fields = std::map<std::string, std::string, std::less<>>;

Result<Fields> SplitFields(std::string_view text, std::string_view what) {
  Fields fields;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return Status::Corruption(std::string(what) + ": line '" + std::string(line) +
                                "' is not key=value");
    }
    fields[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  return fields;
}

template <typename Int>
Status GetInt(const Fields& f, std::string_view key, std::string_view what, Int* out) {
  auto it = f.find(key);
  if (it == f.end()) return Status::OK();
  const std::string& v = it->second;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
  if (ec != std::errc() || p != v.data() + v.size()) {
    return Status::Corruption(std::string(what) + ": " + std::string(key) + "=" + v +
                              " is not a number");
  }
  return Status::OK();
}

Status GetBool(const Fields& f, std::string_view key, std::string_view what, bool* out) {
  uint32_t v = *out ? 1 : 0;
  RELGRAPH_RETURN_IF_ERROR(GetInt(f, key, what, &v));
  if (v > 1)
    return Status::Corruption(std::string(what) + ": " + std::string(key) + " is not 0 or 1");
  *out = v == 1;
  return Status::OK();
}

std::string GetText(const Fields& f, std::string_view key) {
  auto it = f.find(key);
  return it == f.end() ? std::string() : it->second;
}

void Put(std::string* out, std::string_view key, std::string_view value) {
  out->append(key).append("=").append(value).append("\n");
}
void Put(std::string* out, std::string_view key, uint64_t value) {
  Put(out, key, std::to_string(value));
}

std::string KeyPart(std::string_view address) {
  std::string part(address);
  for (char& c : part) {
    if (c == '.') c = '-';
    if (c == ':') c = '_';
  }
  return part;
}

}  // namespace

std::string FormatGroupLease(const GroupLease& l) {
  std::string out;
  Put(&out, "holder", l.holder);
  Put(&out, "epoch", l.epoch);
  Put(&out, "epoch_id", l.epoch_id);
  Put(&out, "sync_replicas", l.sync_replicas);
  std::string members;
  for (const std::string& m : l.members) members += (members.empty() ? "" : ",") + m;
  Put(&out, "members", members);
  Put(&out, "renewals", l.renewals);
  Put(&out, "renewed_ms", std::to_string(l.renewed_ms));
  Put(&out, "handover", l.handover ? 1 : 0);
  Put(&out, "released", l.released ? 1 : 0);
  return out;
}

Result<GroupLease> ParseGroupLease(std::string_view text) {
  constexpr std::string_view kWhat = "group lease";
  auto f = SplitFields(text, kWhat);
  if (!f.ok()) return f.status();
  GroupLease l;
  l.holder = GetText(*f, "holder");
  RELGRAPH_RETURN_IF_ERROR(GetInt(*f, "epoch", kWhat, &l.epoch));
  RELGRAPH_RETURN_IF_ERROR(GetInt(*f, "epoch_id", kWhat, &l.epoch_id));
  RELGRAPH_RETURN_IF_ERROR(GetInt(*f, "sync_replicas", kWhat, &l.sync_replicas));
  RELGRAPH_RETURN_IF_ERROR(GetInt(*f, "renewals", kWhat, &l.renewals));
  RELGRAPH_RETURN_IF_ERROR(GetInt(*f, "renewed_ms", kWhat, &l.renewed_ms));
  RELGRAPH_RETURN_IF_ERROR(GetBool(*f, "handover", kWhat, &l.handover));
  RELGRAPH_RETURN_IF_ERROR(GetBool(*f, "released", kWhat, &l.released));
  const std::string members = GetText(*f, "members");
  size_t at = 0;
  while (at < members.size()) {
    size_t end = members.find(',', at);
    if (end == std::string::npos) end = members.size();
    if (end > at) l.members.push_back(members.substr(at, end - at));
    at = end + 1;
  }
  if (l.holder.empty()) return Status::Corruption("group lease: no holder");
  return l;
}

std::string FormatGroupMember(const GroupMember& m) {
  std::string out;
  Put(&out, "address", m.address);
  Put(&out, "role", m.role);
  Put(&out, "epoch", m.epoch);
  Put(&out, "epoch_id", m.epoch_id);
  Put(&out, "applied_lsn", m.applied_lsn);
  Put(&out, "durable_lsn", m.durable_lsn);
  Put(&out, "state", m.state);
  Put(&out, "link_alive", m.link_alive ? 1 : 0);
  Put(&out, "lapsed_revision", m.lapsed_revision);
  Put(&out, "reported_ms", std::to_string(m.reported_ms));
  return out;
}

Result<GroupMember> ParseGroupMember(std::string_view text) {
  constexpr std::string_view kWhat = "group member";
  auto f = SplitFields(text, kWhat);
  if (!f.ok()) return f.status();
  GroupMember m;
  m.address = GetText(*f, "address");
  if (auto role = GetText(*f, "role"); !role.empty()) m.role = role;
  if (m.role != "primary" && m.role != "replica") {
    return Status::Corruption("group member: role '" + m.role + "' is not primary or replica");
  }
  RELGRAPH_RETURN_IF_ERROR(GetInt(*f, "epoch", kWhat, &m.epoch));
  RELGRAPH_RETURN_IF_ERROR(GetInt(*f, "epoch_id", kWhat, &m.epoch_id));
  RELGRAPH_RETURN_IF_ERROR(GetInt(*f, "applied_lsn", kWhat, &m.applied_lsn));
  RELGRAPH_RETURN_IF_ERROR(GetInt(*f, "durable_lsn", kWhat, &m.durable_lsn));
  m.state = GetText(*f, "state");
  RELGRAPH_RETURN_IF_ERROR(GetBool(*f, "link_alive", kWhat, &m.link_alive));
  RELGRAPH_RETURN_IF_ERROR(GetInt(*f, "lapsed_revision", kWhat, &m.lapsed_revision));
  RELGRAPH_RETURN_IF_ERROR(GetInt(*f, "reported_ms", kWhat, &m.reported_ms));
  if (m.address.empty()) return Status::Corruption("group member: no address");
  return m;
}

std::string FormatGroupSwitchover(const GroupSwitchover& r) {
  std::string out;
  Put(&out, "to", r.to);
  Put(&out, "requested_ms", std::to_string(r.requested_ms));
  return out;
}

Result<GroupSwitchover> ParseGroupSwitchover(std::string_view text) {
  constexpr std::string_view kWhat = "group switchover";
  auto f = SplitFields(text, kWhat);
  if (!f.ok()) return f.status();
  GroupSwitchover r;
  r.to = GetText(*f, "to");
  RELGRAPH_RETURN_IF_ERROR(GetInt(*f, "requested_ms", kWhat, &r.requested_ms));
  return r;
}

Status CheckGroupName(std::string_view name) {
  if (name.empty() || name.size() > 64) {
    return Status::InvalidArgument("group name '" + std::string(name) + "': 1 to 64 characters");
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) {
      return Status::InvalidArgument("group name '" + std::string(name) +
                                     "': only letters, digits, '_' and '-'");
    }
  }
  return Status::OK();
}

std::string LeaseKey(std::string_view group) {
  return std::string(group) + ".lease";
}
std::string SwitchoverKey(std::string_view group) {
  return std::string(group) + ".switchover";
}
std::string MemberKeyPrefix(std::string_view group) {
  return std::string(group) + ".member.";
}
std::string MemberKey(std::string_view group, std::string_view address) {
  return MemberKeyPrefix(group) + KeyPart(address);
}

}  // namespace relgraph::net
