#include "net/protocol/json_reply.h"

#include <cstdio>

namespace relgraph::net {

std::string ReplyJson(const RelationsRequest& request, const RelationsReply& reply) {
  std::string out = "{";
  for (size_t i = 0; i < reply.relations.size() && i < request.others.size(); ++i) {
    if (i > 0) out += ",";
    AppendJsonString(&out, std::to_string(request.others[i]));
    out += ":";
    AppendJsonString(&out, RelationCodeName(reply.relations[i]));
  }
  return out + "}";
}

std::string ReplyJson(const BlockRequest&, const BlockReply& r) {
  const auto flag = [](bool b) { return b ? "true" : "false"; };
  return std::string("{\"created\":") + flag(r.created) + ",\"ts\":" + std::to_string(r.ts) +
         ",\"unfollowed\":" + flag((r.removed & 1) != 0) +
         ",\"lost_follower\":" + flag((r.removed & 2) != 0) +
         ",\"dropped_request\":" + flag((r.removed & 4) != 0) + "}";
}

std::string ReplyJson(const IsPrivateRequest&, const IsPrivateReply& r) {
  return std::string("{\"private\":") + (r.is_private ? "true" : "false") + "}";
}

std::string ReplyJson(const PingRequest&, const Empty&) {
  return "{\"pong\":true}";
}
std::string ReplyJson(const AckRequest&, const Empty&) {
  return "{\"acked\":true}";
}
std::string ReplyJson(const DeletePostRequest&, const Empty&) {
  return "{\"deleted\":true}";
}
std::string ReplyJson(const DeleteCursorRequest&, const Empty&) {
  return "{\"deleted\":true}";
}

std::vector<std::pair<std::string, std::string>> InfoJsonFields(const InfoReply& reply) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const InfoField& f : reply.fields) {
    std::string value;
    if (f.name == "durability") {  // a mode, not a count
      AppendJsonString(&value, DurabilityCodeName(f.value));
    } else if (f.name == "server_version") {  // major << 32 | minor << 16 | patch
      AppendJsonString(&value, std::to_string(f.value >> 32) + "." +
                                   std::to_string((f.value >> 16) & 0xffff) + "." +
                                   std::to_string(f.value & 0xffff));
    } else if (f.name == "server_build") {  // a commit's first 16 hex digits
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(f.value));
      AppendJsonString(&value, f.value == 0 ? "unknown" : hex);
    } else {
      value = std::to_string(f.value);
    }
    out.emplace_back(f.name, std::move(value));
  }
  return out;
}

std::string ReplyJson(const InfoRequest&, const InfoReply& reply) {
  std::string out = "{";
  for (const auto& [name, value] : InfoJsonFields(reply)) {
    if (out.size() > 1) out += ",";
    AppendJsonString(&out, name);
    out += ":" + value;
  }
  return out + "}";
}

}  // namespace relgraph::net
