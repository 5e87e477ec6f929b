// PrometheusText: writes the Prometheus text exposition format, version 0.0.4 (docs/http.md):
// per metric family a `# HELP` and a `# TYPE` line, then its samples, labels escaped.
//
// Names are the caller's: follow the conventions (a `relgraph_` prefix, base units such as
// seconds and bytes, `_total` on counters). A histogram is written from fixed bucket bounds and
// per-bucket (not cumulative) counts; the writer adds them up, the `+Inf` bucket, `_sum` and
// `_count`.
//
// Thread-safety: none (one writer per page).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relgraph::net {

using Label = std::pair<std::string_view, std::string_view>;
using Labels = std::span<const Label>;

class PrometheusText {
 public:
  // Starts a family. `type` is "counter", "gauge", "histogram" or "untyped". Call once per
  // name: the format wants a family's samples together.
  void Family(std::string_view name, std::string_view type, std::string_view help);
  // One sample of the current family (for a histogram, use Histogram).
  void Sample(std::string_view name, Labels labels, uint64_t value);
  void Sample(std::string_view name, Labels labels, double value);
  void Sample(std::string_view name, std::initializer_list<Label> labels, uint64_t value) {
    Sample(name, Labels(labels.begin(), labels.size()), value);
  }
  void Sample(std::string_view name, std::initializer_list<Label> labels, double value) {
    Sample(name, Labels(labels.begin(), labels.size()), value);
  }
  // One histogram series of family `name`: counts[i] observations fell in
  // (bounds[i-1], bounds[i]]; counts has one more entry than bounds, the observations past the
  // last bound. REQUIRES: counts.size() == bounds.size() + 1, bounds ascending.
  void Histogram(std::string_view name, Labels labels, std::span<const double> bounds,
                 std::span<const uint64_t> counts, double sum);

  const std::string& text() const { return out_; }
  std::string Take() { return std::move(out_); }

  // The content type of this format, for the HTTP response.
  static constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

 private:
  void Series(std::string_view name, std::string_view suffix, Labels labels,
              const Label* extra);
  std::string out_;
};

// A label value or HELP text escaped as the format wants (\\, \", \n; HELP leaves " alone).
std::string EscapeLabelValue(std::string_view value);

}  // namespace relgraph::net
