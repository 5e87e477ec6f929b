#include "net/http/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace relgraph::net {
namespace {

std::string FormatDouble(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest exact form
  return std::string(buf, r.ptr);
}

std::string EscapeHelp(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void PrometheusText::Family(std::string_view name, std::string_view type,
                            std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  out_ += EscapeHelp(help);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void PrometheusText::Series(std::string_view name, std::string_view suffix, Labels labels,
                            const Label* extra) {
  out_ += name;
  out_ += suffix;
  if (!labels.empty() || extra != nullptr) {
    out_ += '{';
    bool first = true;
    auto put = [&](const Label& l) {
      if (!first) out_ += ',';
      first = false;
      out_ += l.first;
      out_ += "=\"";
      out_ += EscapeLabelValue(l.second);
      out_ += '"';
    };
    for (const Label& l : labels) put(l);
    if (extra != nullptr) put(*extra);
    out_ += '}';
  }
  out_ += ' ';
}

void PrometheusText::Sample(std::string_view name, Labels labels, uint64_t value) {
  Series(name, "", labels, nullptr);
  out_ += std::to_string(value);
  out_ += '\n';
}

void PrometheusText::Sample(std::string_view name, Labels labels, double value) {
  Series(name, "", labels, nullptr);
  out_ += FormatDouble(value);
  out_ += '\n';
}

void PrometheusText::Histogram(std::string_view name, Labels labels,
                               std::span<const double> bounds, std::span<const uint64_t> counts,
                               double sum) {
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds.size(); ++i) {
    cumulative += i < counts.size() ? counts[i] : 0;
    const std::string le = i < bounds.size() ? FormatDouble(bounds[i]) : "+Inf";
    const Label bucket{"le", le};
    Series(name, "_bucket", labels, &bucket);
    out_ += std::to_string(cumulative);
    out_ += '\n';
  }
  Series(name, "_sum", labels, nullptr);
  out_ += FormatDouble(sum);
  out_ += '\n';
  Series(name, "_count", labels, nullptr);
  out_ += std::to_string(cumulative);
  out_ += '\n';
}

}  // namespace relgraph::net
