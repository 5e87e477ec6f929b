// MetricsPage: what relgraphd serves at /metrics, in the Prometheus text format (docs/http.md).
//
// Why this design: INFO is the one source of the node's numbers; this page is INFO's fields
// under Prometheus names (kInfoMetrics says which field becomes which metric, and which are
// left out and why), plus what only a scrape wants: the server's per-command counts, errors and
// latency histograms, the WAL's fsync histogram, per-cursor lag and the build. A pure function
// of its inputs, so the tests check the page without a server.
//
// Thread-safety: functions of their arguments only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/db.h"
#include "net/protocol/messages.h"
#include "net/server/command_metrics.h"

namespace relgraph {

struct MetricsInputs {
  std::vector<net::InfoField> info;       // INFO's reply (CommandService::Info)
  const net::CommandMetrics* commands = nullptr;  // the server's counts (net::Server)
  Db::StorageStats storage;
  MemoryUsage graph_memory;               // the graph's parts (INFO has their sum)
  std::vector<Db::CursorInfo> cursors;
  uint64_t now_ms = 0;                    // wall clock, for ages
  std::string version;
  std::string build;
};

std::string MetricsPage(const MetricsInputs& in);

// How an INFO field appears on the page: `metric` empty means left out (`help` says why).
struct InfoMetric {
  std::string_view field;
  std::string_view metric;
  std::string_view type;   // "gauge" or "counter"
  std::string_view label;  // "part=graph": one sample of a family with a label; "" none
  double scale;            // value * scale (milliseconds to seconds: 0.001)
  std::string_view help;
};
const std::vector<InfoMetric>& InfoMetrics();

}  // namespace relgraph
