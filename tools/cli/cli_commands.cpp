#include "tools/cli/cli_commands.h"

#include <charconv>
#include <functional>
#include <map>
#include <sstream>

namespace relgraph::cli {
namespace {

using net::RelationCode;

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

Status Usage(const std::string& line) {
  return Status::InvalidArgument("usage: " + line);
}

// A whole decimal integer of type T; `what` names the argument in the error.
template <typename T>
Result<T> ParseInt(const std::string& s, const char* what) {
  T v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    return Status::InvalidArgument(std::string(what) + " '" + s + "' is not a number");
  }
  return v;
}
Result<uint64_t> ParseU64(const std::string& s, const char* what) {
  return ParseInt<uint64_t>(s, what);
}
Result<int64_t> ParseI64(const std::string& s, const char* what) {
  return ParseInt<int64_t>(s, what);
}

std::string Rel(RelationCode r) {
  return "\"" + std::string(net::RelationCodeName(r)) + "\"";
}

// USER [--limit=N] [--offset=N] [--after=TS:USER] [--viewer=V]
Result<net::PageQuery> ParsePageQuery(const std::vector<std::string>& w, const std::string& use) {
  if (w.size() < 2) return Usage(use);
  net::PageQuery q;
  auto user = ParseU64(w[1], "user");
  if (!user.ok()) return user.status();
  q.user = *user;
  for (size_t i = 2; i < w.size(); ++i) {
    const std::string& a = w[i];
    const size_t eq = a.find('=');
    const std::string key = a.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (key == "--limit") {
      auto v = ParseU64(value, "limit");
      if (!v.ok()) return v.status();
      if (*v > 65535) return Status::InvalidArgument("limit " + value + " is out of range");
      q.limit = static_cast<uint16_t>(*v);
    } else if (key == "--offset") {
      auto v = ParseU64(value, "offset");
      if (!v.ok()) return v.status();
      if (*v > UINT32_MAX) return Status::InvalidArgument("offset " + value + " is out of range");
      q.offset = static_cast<uint32_t>(*v);
    } else if (key == "--after") {
      const size_t colon = value.find(':');
      if (colon == std::string::npos) return Usage(use);
      auto ts = ParseI64(value.substr(0, colon), "cursor time");
      auto u = ParseU64(value.substr(colon + 1), "cursor user");
      if (!ts.ok()) return ts.status();
      if (!u.ok()) return u.status();
      q.after = net::WireCursor{*ts, *u};
    } else if (key == "--viewer") {
      auto v = ParseU64(value, "viewer");
      if (!v.ok()) return v.status();
      q.viewer = *v;
    } else {
      return Usage(use);
    }
  }
  return q;
}

std::string RenderPage(const net::PageReply& page, bool json) {
  if (json) {
    std::string out = "{\"entries\":[";
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
  std::ostringstream out;
  for (const auto& e : page.entries) {
    out << e.user << "\tts=" << e.ts;
    if (e.mutual) out << "\tmutual";
    if (e.viewer_relation != RelationCode::kNone) {
      out << "\tviewer:" << net::RelationCodeName(e.viewer_relation);
    }
    out << "\n";
  }
  out << "(" << page.entries.size() << " entries)";
  if (page.next) out << " next: --after=" << page.next->ts << ":" << page.next->user;
  out << "\n";
  return out.str();
}

template <typename T>
Result<std::string> Render(const Result<T>& r, bool json,
                           const std::function<void(Rendered&, const T&)>& fill) {
  if (!r.ok()) return r.status();
  Rendered out;
  fill(out, *r);
  return json ? out.Json() : out.Text();
}

struct Command {
  const char* usage;
  size_t min_words;
  std::function<Result<std::string>(net::Client&, const std::vector<std::string>&, bool)> run;
};

Result<std::vector<uint64_t>> Ids(const std::vector<std::string>& w, size_t from) {
  std::vector<uint64_t> ids;
  for (size_t i = from; i < w.size(); ++i) {
    auto v = ParseU64(w[i], "user");
    if (!v.ok()) return v.status();
    ids.push_back(*v);
  }
  return ids;
}

const std::map<std::string, Command>& Commands() {
  static const std::map<std::string, Command> commands = {
      {"ping",
       {"ping", 1,
        [](net::Client& c, const auto&, bool json) -> Result<std::string> {
          RELGRAPH_RETURN_IF_ERROR(c.Ping());
          return std::string(json ? "{\"pong\":true}\n" : "pong\n");
        }}},
      {"info",
       {"info", 1,
        [](net::Client& c, const auto&, bool json) {
          return Render<net::InfoReply>(c.Info(), json, [](Rendered& o, const auto& r) {
            for (const auto& f : r.fields) o.Add(f.name, f.value);
          });
        }}},
      {"snapshot",
       {"snapshot", 1,
        [](net::Client& c, const auto&, bool json) {
          return Render<net::SnapshotReply>(c.Snapshot(), json, [](Rendered& o, const auto& r) {
            o.Add("lsn", r.lsn);
            o.Add("edges", r.edges);
            o.Add("file_bytes", r.file_bytes);
            o.AddInt("created_ms", r.created_ms);
          });
        }}},
      {"follow",
       {"follow FOLLOWER FOLLOWEE [TS_MS]", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          std::optional<int64_t> ts;
          if (w.size() > 3) {
            auto t = ParseI64(w[3], "time");
            if (!t.ok()) return t.status();
            ts = *t;
            ids = Ids({w.begin(), w.begin() + 3}, 1);
          }
          if (!ids.ok()) return ids.status();
          return Render<net::FollowReply>(c.Follow((*ids)[0], (*ids)[1], ts), json,
                                          [](Rendered& o, const auto& r) {
                                            o.AddBool("created", r.created);
                                            o.Add("relation", Rel(r.relation));
                                            o.AddInt("followed_at", r.followed_at);
                                          });
        }}},
      {"unfollow",
       {"unfollow FOLLOWER FOLLOWEE", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          return Render<bool>(c.Unfollow((*ids)[0], (*ids)[1]), json,
                              [](Rendered& o, const bool& r) { o.AddBool("removed", r); });
        }}},
      {"relation",
       {"relation A B", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          return Render<RelationCode>(
              c.Relation((*ids)[0], (*ids)[1]), json,
              [](Rendered& o, const RelationCode& r) { o.Add("relation", Rel(r)); });
        }}},
      {"relations",
       {"relations A B [B ...]", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          const std::vector<uint64_t> others(ids->begin() + 1, ids->end());
          return Render<std::vector<RelationCode>>(
              c.Relations((*ids)[0], others), json,
              [&](Rendered& o, const std::vector<RelationCode>& r) {
                for (size_t i = 0; i < r.size(); ++i) {
                  o.Add(std::to_string(others[i]), Rel(r[i]));
                }
              });
        }}},
      {"counts",
       {"counts USER", 2,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          return Render<net::CountsReply>(c.Counts((*ids)[0]), json,
                                          [](Rendered& o, const auto& r) {
                                            o.Add("following", r.following);
                                            o.Add("fans", r.fans);
                                            o.Add("friends", r.friends);
                                          });
        }}},
      {"known-followers",
       {"known-followers VIEWER TARGET [LIMIT]", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          const uint64_t limit = ids->size() > 2 ? (*ids)[2] : 3;
          if (limit > 65535) return Status::InvalidArgument("limit is out of range");
          return Render<net::KnownFollowersReply>(
              c.KnownFollowers((*ids)[0], (*ids)[1], static_cast<uint16_t>(limit)), json,
              [](Rendered& o, const auto& r) {
                o.Add("total", r.total);
                std::string list = "[";
                for (size_t i = 0; i < r.users.size(); ++i) {
                  list += (i > 0 ? "," : "") + std::to_string(r.users[i]);
                }
                o.Add("users", list + "]");
              });
        }}},
      {"remove-user",
       {"remove-user USER", 2,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          return Render<uint64_t>(
              c.RemoveUser((*ids)[0]), json,
              [](Rendered& o, const uint64_t& r) { o.Add("edges_removed", r); });
        }}},
  };
  return commands;
}

const char* kPageUsage = " USER [--limit=N] [--offset=N] [--after=TS:USER] [--viewer=V]";

}  // namespace

Result<std::string> RunCommand(net::Client& client, const std::vector<std::string>& words,
                               bool json) {
  if (words.empty()) return Status::InvalidArgument("no command (try 'help')");
  const std::string& name = words[0];
  if (name == "following" || name == "fans" || name == "friends") {
    auto q = ParsePageQuery(words, name + kPageUsage);
    if (!q.ok()) return q.status();
    auto page = name == "following" ? client.Following(*q)
                : name == "fans"    ? client.Fans(*q)
                                    : client.Friends(*q);
    if (!page.ok()) return page.status();
    return RenderPage(*page, json);
  }
  auto it = Commands().find(name);
  if (it == Commands().end()) {
    return Status::InvalidArgument("unknown command '" + name + "' (try 'help')");
  }
  if (words.size() < it->second.min_words) return Usage(it->second.usage);
  return it->second.run(client, words, json);
}

std::string CommandUsage() {
  std::string out;
  for (const auto& [name, c] : Commands()) out += std::string("  ") + c.usage + "\n";
  for (const char* list : {"following", "fans", "friends"}) {
    out += std::string("  ") + list + kPageUsage + "\n";
  }
  return out;
}

std::string FormatError(const Status& status, bool json) {
  if (!json) return "error: " + status.ToString() + "\n";
  Rendered r;
  r.AddText("error", CodeName(status.code()));
  r.AddText("message", status.message());
  if (status.detail() != 0) r.AddInt("detail", status.detail());
  return r.Json();
}

}  // namespace relgraph::cli
