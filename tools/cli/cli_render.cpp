#include "tools/cli/cli_render.h"

#include <sstream>

namespace relgraph::cli {

using net::RelationCode;

std::string Rel(RelationCode r) {
  return "\"" + std::string(net::RelationCodeName(r)) + "\"";
}

std::string NextCommand(const std::vector<std::string>& words, const std::string& cursor) {
  std::string out = "next: relgraph-cli";
  for (const std::string& w : words) {
    if (w.rfind("--after=", 0) != 0) out += " " + w;
  }
  return out + " --after=" + cursor + "\n";
}

std::string RenderFeed(const net::FeedReply& page, const std::vector<std::string>& words,
                       bool json) {
  const std::string next =
      page.next ? std::to_string(page.next->ts) + ":" + std::to_string(page.next->post) : "";
  if (json) {
    std::string out = "{\"entries\":[";
    for (size_t i = 0; i < page.entries.size(); ++i) {
      const auto& e = page.entries[i];
      if (i > 0) out += ",";
      out += "{\"post\":" + std::to_string(e.post) + ",\"author\":" + std::to_string(e.author) +
             ",\"ts\":" + std::to_string(e.ts) + ",\"kind\":" + std::to_string(e.kind) + "}";
    }
    return out + "],\"next\":" + (page.next ? "\"" + next + "\"" : "null") + "}\n";
  }
  std::ostringstream out;
  for (const auto& e : page.entries) {
    out << e.post << "\tby=" << e.author << "\tts=" << e.ts << "\tkind=" << int{e.kind} << "\n";
  }
  out << "(" << page.entries.size() << " entries)\n";
  if (page.next) out << NextCommand(words, next);
  return out.str();
}

std::string JsonList(const std::vector<uint64_t>& ids) {
  std::string list = "[";
  for (size_t i = 0; i < ids.size(); ++i) list += (i > 0 ? "," : "") + std::to_string(ids[i]);
  return list + "]";
}

std::string RenderPage(const net::PageReply& page, const std::vector<std::string>& words,
                       const net::PageQuery& q, bool json,
                       std::optional<uint32_t> total) {
  if (json) {
    std::string out = total ? "{\"total\":" + std::to_string(*total) + ",\"entries\":["
                            : std::string("{\"entries\":[");
    for (size_t i = 0; i < page.entries.size(); ++i) {
      const auto& e = page.entries[i];
      if (i > 0) out += ",";
      out += "{\"user\":" + std::to_string(e.user) + ",\"ts\":" + std::to_string(e.ts) +
             ",\"viewer_relation\":" + Rel(e.viewer_relation) +
             ",\"mutual\":" + (e.mutual ? "true" : "false") + "}";
    }
    out += "],\"next\":";
    out += page.next
               ? "\"" + std::to_string(page.next->ts) + ":" + std::to_string(page.next->user) + "\""
               : "null";
    return out + "}\n";
  }
  const bool show_mutual = words[0] == "following" || words[0] == "fans";
  std::ostringstream out;
  for (const auto& e : page.entries) {
    out << e.user << "\tts=" << e.ts;
    if (show_mutual) out << "\tmutual with " << q.user << ": " << (e.mutual ? "yes" : "no");
    if (q.viewer) {
      out << "\t" << *q.viewer << " to " << e.user << ": "
          << net::RelationCodeName(e.viewer_relation);
    }
    out << "\n";
  }
  out << "(" << page.entries.size();
  if (total) out << " of " << *total;
  out << " entries)\n";
  if (page.next) {
    out << NextCommand(words, std::to_string(page.next->ts) + ":" + std::to_string(page.next->user));
  }
  return out.str();
}

}  // namespace relgraph::cli
