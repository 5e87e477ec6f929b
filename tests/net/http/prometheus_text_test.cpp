#include "net/http/prometheus_text.h"

#include <doctest.h>

#include <array>

namespace relgraph {
namespace {

TEST_CASE("prometheus text: HELP and TYPE lines, escaped label values, integers exact") {
  net::PrometheusText out;
  out.Family("relgraph_x_total", "counter", "A help\nwith a \\ and \"quotes\".");
  out.Sample("relgraph_x_total", {{"cursor", "a\"b\\c\nd"}}, uint64_t{18446744073709551615ull});
  out.Sample("relgraph_x_total", {}, 0.25);
  CHECK(out.text() ==
        "# HELP relgraph_x_total A help\\nwith a \\\\ and \"quotes\".\n"
        "# TYPE relgraph_x_total counter\n"
        "relgraph_x_total{cursor=\"a\\\"b\\\\c\\nd\"} 18446744073709551615\n"
        "relgraph_x_total 0.25\n");
}

TEST_CASE("prometheus text: a histogram's buckets are cumulative, +Inf holds them all") {
  net::PrometheusText out;
  const std::array<double, 2> bounds = {0.001, 0.01};
  const std::array<uint64_t, 3> counts = {2, 0, 5};  // 5 past the last bound
  const net::Label l{"command", "follow"};
  out.Histogram("relgraph_d_seconds", net::Labels(&l, 1), bounds, counts, 1.5);
  CHECK(out.text() ==
        "relgraph_d_seconds_bucket{command=\"follow\",le=\"0.001\"} 2\n"
        "relgraph_d_seconds_bucket{command=\"follow\",le=\"0.01\"} 2\n"
        "relgraph_d_seconds_bucket{command=\"follow\",le=\"+Inf\"} 7\n"
        "relgraph_d_seconds_sum{command=\"follow\"} 1.5\n"
        "relgraph_d_seconds_count{command=\"follow\"} 7\n");
}

}  // namespace
}  // namespace relgraph
