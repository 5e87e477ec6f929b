// How relgraph-cli shows a reply: ordered key/value pairs as text or JSON, and the pages of
// users and posts with the command of the next page.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/protocol/messages.h"
#include "storage/status.h"

namespace relgraph::cli {

// A reply rendered as ordered key/value pairs (values already formatted as JSON literals).
struct Rendered {
  std::vector<std::pair<std::string, std::string>> fields;
  void Add(const std::string& key, const std::string& json_value) {
    fields.emplace_back(key, json_value);
  }
  void Add(const std::string& key, uint64_t v) { Add(key, std::to_string(v)); }
  void AddInt(const std::string& key, int64_t v) { Add(key, std::to_string(v)); }
  void AddBool(const std::string& key, bool v) { Add(key, v ? "true" : "false"); }
  void AddText(const std::string& key, std::string_view v) {
    std::string q = "\"";
    for (char c : v) {
      if (c == '"' || c == '\\') q += '\\';
      if (static_cast<unsigned char>(c) < 0x20) continue;
      q += c;
    }
    Add(key, q + "\"");
  }
  std::string Text() const {
    std::string out;
    for (const auto& [k, v] : fields) {
      std::string shown = v;
      if (shown.size() >= 2 && shown.front() == '"') shown = shown.substr(1, shown.size() - 2);
      out += k + ": " + shown + "\n";
    }
    return out;
  }
  std::string Json() const {
    std::string out = "{";
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) out += ",";
      out += "\"" + fields[i].first + "\":" + fields[i].second;
    }
    return out + "}\n";
  }
};

// Renders a successful reply through fill(), or passes its error on.
template <typename T>
Result<std::string> Render(const Result<T>& r, bool json,
                           const std::function<void(Rendered&, const T&)>& fill) {
  if (!r.ok()) return r.status();
  Rendered out;
  fill(out, *r);
  return json ? out.Json() : out.Text();
}

// A relation as a JSON string: "\"mutual\"".
std::string Rel(net::RelationCode r);
// [1,2,3]
std::string JsonList(const std::vector<uint64_t>& ids);
// "next: relgraph-cli fans 2 --limit=1 --after=TS:ID": the command words with the next page's
// cursor in place of any --after, to copy as it is.
std::string NextCommand(const std::vector<std::string>& words, const std::string& cursor);
// A page of posts (timeline, user-posts).
std::string RenderFeed(const net::FeedReply& page, const std::vector<std::string>& words,
                       bool json);
// A page of users. In text, one line per user: its id, the time of the edge, for following and
// fans whether the user and the list's owner follow each other ("mutual with 2: yes"), and
// with --viewer the viewer's relation to the user ("1 to 3: following" reads "1 follows 3");
// `total` for the lists that carry one (blocks, requests).
std::string RenderPage(const net::PageReply& page, const std::vector<std::string>& words,
                       const net::PageQuery& q, bool json,
                       std::optional<uint32_t> total = std::nullopt);

}  // namespace relgraph::cli
