// JudgeReadiness: what /readyz answers (docs/http.md): 200 when the node can take the traffic
// its role is for, else 503, with a JSON body saying why.
//
// Ready means: recovered and serving; a replica streaming from its primary and within
// --ready-max-lag-ms of it; a cluster shard that has joined its cluster; a primary whose WAL
// accepts writes (a full disk makes it not ready). Judged from INFO's fields (one source) and
// the replica's link.
//
// Thread-safety: a function of its arguments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "net/protocol/messages.h"

namespace relgraph {

struct ReadinessInputs {
  bool serving = false;              // recovered, and the protocol port accepts connections
  std::vector<net::InfoField> info;  // INFO's reply
  std::string link_state;            // a replica's link to its primary (Replication::Link)
  std::string link_message;
  uint64_t max_lag_ms = 10000;
};

struct Readiness {
  bool ready = false;
  std::string json;  // {"ready":B,"role":"primary|replica|starting","reasons":[...]}
};

Readiness JudgeReadiness(const ReadinessInputs& in);

}  // namespace relgraph
