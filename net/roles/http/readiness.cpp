#include "net/roles/http/readiness.h"

#include <cstdio>
#include <optional>

namespace relgraph {
namespace {

std::optional<uint64_t> Field(const std::vector<net::InfoField>& info, std::string_view name) {
  for (const auto& f : info) {
    if (f.name == name) return f.value;
  }
  return std::nullopt;
}

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

Readiness JudgeReadiness(const ReadinessInputs& in) {
  std::vector<std::string> reasons;
  std::string role = "starting";
  if (!in.serving) {
    reasons.push_back("recovering: the data directory is being opened, not serving yet");
  } else {
    const bool replica = Field(in.info, "role").value_or(0) == 1;
    role = replica ? "replica" : "primary";
    if (replica) {
      const uint64_t lag = Field(in.info, "replica_lag_ms").value_or(0);
      if (in.link_state != "streaming") {
        reasons.push_back("replica: not streaming from its primary (" + in.link_state +
                          (in.link_message.empty() ? "" : ": " + in.link_message) + ")");
      } else if (lag > in.max_lag_ms) {
        reasons.push_back("replica: " + std::to_string(lag) + " ms behind its primary, over " +
                          "--ready-max-lag-ms=" + std::to_string(in.max_lag_ms) + " (" +
                          std::to_string(Field(in.info, "replica_lag_records").value_or(0)) +
                          " records)");
      }
    } else if (Field(in.info, "writes_refused").value_or(0) != 0) {
      reasons.push_back(std::string("primary: the WAL cannot be written (") +
                        (Field(in.info, "writes_refused_reason").value_or(0) == 1
                             ? "the disk is full"
                             : "an I/O error") +
                        "): writes are refused");
    }
    if (Field(in.info, "cluster_joined") == std::optional<uint64_t>(0)) {
      reasons.push_back("shard: not joined its cluster yet (NATS does not answer)");
    }
  }
  Readiness r;
  r.ready = reasons.empty();
  r.json = std::string("{\"ready\":") + (r.ready ? "true" : "false") +
           ",\"role\":" + JsonString(role) + ",\"reasons\":[";
  for (size_t i = 0; i < reasons.size(); ++i) r.json += (i ? "," : "") + JsonString(reasons[i]);
  r.json += "]}\n";
  return r;
}

}  // namespace relgraph
