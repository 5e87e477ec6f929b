#include "tools/cli/cli_commands.h"

#include <charconv>
#include <functional>
#include <limits>
#include <map>
#include <sstream>

namespace relgraph::cli {

Status UsageError(const std::string& message) {
  return Status(Code::kInvalidArgument, message, kUsageErrorDetail);
}

bool IsUsageError(const Status& status) {
  return status.code() == Code::kInvalidArgument && status.detail() == kUsageErrorDetail;
}

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
  return UsageError("usage: " + line);
}

// "limit 100000 is out of range [0, 65535]".
Status OutOfRange(const std::string& what, const std::string& value, uint64_t max,
                  int64_t min = 0) {
  return UsageError(what + " " + value + " is out of range [" + std::to_string(min) + ", " +
                    std::to_string(max) + "]");
}

// A whole decimal integer of type T; `what` names the argument in the error.
template <typename T>
Result<T> ParseInt(const std::string& s, const char* what) {
  T v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range && ptr == s.data() + s.size()) {
    return UsageError(std::string(what) + " " + s + " is out of range [" +
                      std::to_string(std::numeric_limits<T>::min()) + ", " +
                      std::to_string(std::numeric_limits<T>::max()) + "]");
  }
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    return UsageError(std::string(what) + " '" + s + "' is not a number");
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

// Splits "--key=value" words after the first two into (key, value).
std::pair<std::string, std::string> Option(const std::string& a) {
  const size_t eq = a.find('=');
  return {a.substr(0, eq), eq == std::string::npos ? "" : a.substr(eq + 1)};
}

Result<uint16_t> ParseLimit(const std::string& value) {
  auto v = ParseU64(value, "limit");
  if (!v.ok()) return v.status();
  if (*v > 65535) return OutOfRange("limit", value, 65535);
  return static_cast<uint16_t>(*v);
}

// "TS:ID", the form every page prints as its next cursor.
Result<std::pair<int64_t, uint64_t>> ParseCursor(const std::string& value, const std::string& use) {
  const size_t colon = value.find(':');
  if (colon == std::string::npos) return Usage(use);
  auto ts = ParseI64(value.substr(0, colon), "cursor time");
  if (!ts.ok()) return ts.status();
  auto id = ParseU64(value.substr(colon + 1), "cursor id");
  if (!id.ok()) return id.status();
  return std::pair{*ts, *id};
}

// USER then --key=value options. --limit and --after (TS:ID) are common to every page;
// more(key, value, query) handles the rest and returns false for a key it does not know.
template <typename Query, typename CursorType, typename More>
Result<Query> ParseQuery(const std::vector<std::string>& w, const std::string& use, More&& more) {
  if (w.size() < 2) return Usage(use);
  Query q;
  auto user = ParseU64(w[1], "user");
  if (!user.ok()) return user.status();
  q.user = *user;
  for (size_t i = 2; i < w.size(); ++i) {
    const auto [key, value] = Option(w[i]);
    if (key == "--limit") {
      auto v = ParseLimit(value);
      if (!v.ok()) return v.status();
      q.limit = *v;
    } else if (key == "--after") {
      auto c = ParseCursor(value, use);
      if (!c.ok()) return c.status();
      q.after = CursorType{c->first, c->second};
    } else {
      Result<bool> known = more(key, value, q);
      if (!known.ok()) return known.status();
      if (!*known) return Usage(use);
    }
  }
  return q;
}

// USER [--limit=N] [--offset=N] [--after=TS:USER] [--viewer=V]
Result<net::PageQuery> ParsePageQuery(const std::vector<std::string>& w, const std::string& use) {
  return ParseQuery<net::PageQuery, net::WireCursor>(
      w, use,
      [](const std::string& key, const std::string& value, net::PageQuery& q) -> Result<bool> {
        if (key == "--offset") {
          auto v = ParseU64(value, "offset");
          if (!v.ok()) return v.status();
          if (*v > UINT32_MAX)
            return OutOfRange("offset", value, UINT32_MAX);
          q.offset = static_cast<uint32_t>(*v);
          return true;
        }
        if (key == "--viewer") {
          auto v = ParseU64(value, "viewer");
          if (!v.ok()) return v.status();
          q.viewer = *v;
          return true;
        }
        return false;
      });
}

// USER [--limit=N] [--after=TS:POST] [--kinds=N,N,...]: post kinds, numbers 0..63
Result<net::FeedQuery> ParseFeedQuery(const std::vector<std::string>& w, const std::string& use) {
  return ParseQuery<net::FeedQuery, net::PostCursor>(
      w, use,
      [](const std::string& key, const std::string& value, net::FeedQuery& q) -> Result<bool> {
        if (key != "--kinds") return false;
        std::stringstream list(value);
        for (std::string k; std::getline(list, k, ',');) {
          auto v = ParseU64(k, "kind");
          if (!v.ok()) return v.status();
          if (*v > 63) return OutOfRange("kind", k, 63);
          q.kinds |= uint64_t{1} << *v;
        }
        return true;
      });
}

// "next: relgraph-cli fans 2 --limit=1 --after=TS:ID": the command words with the next page's
// cursor in place of any --after, to copy as it is.
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

// A page of users. In text, one line per user: its id, the time of the edge, for following and
// fans whether the user and the list's owner follow each other ("mutual with 2: yes"), and
// with --viewer the viewer's relation to the user ("1 to 3: following" reads "1 follows 3").
std::string RenderPage(const net::PageReply& page, const std::vector<std::string>& words,
                       const net::PageQuery& q, bool json,
                       std::optional<uint32_t> total = std::nullopt) {
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

// mute/unmute/hide/unhide: two ids, the reply says whether anything changed.
Command ToggleCommand(const char* usage,
                      Result<bool> (net::Client::*method)(uint64_t, uint64_t, bool), bool on) {
  return {usage, 3, [method, on](net::Client& c, const auto& w, bool json) -> Result<std::string> {
            auto ids = Ids(w, 1);
            if (!ids.ok()) return ids.status();
            return Render<bool>((c.*method)((*ids)[0], (*ids)[1], on), json,
                                [](Rendered& o, const bool& r) { o.AddBool("changed", r); });
          }};
}

// unblock/reject/withdraw: two ids, the reply says whether anything changed.
Command PairCommand(const char* usage, Result<bool> (net::Client::*method)(uint64_t, uint64_t)) {
  return {usage, 3, [method](net::Client& c, const auto& w, bool json) -> Result<std::string> {
            auto ids = Ids(w, 1);
            if (!ids.ok()) return ids.status();
            return Render<bool>((c.*method)((*ids)[0], (*ids)[1]), json,
                                [](Rendered& o, const bool& r) { o.AddBool("changed", r); });
          }};
}

// mutes/hides: one id, a list of users.
Command ListCommand(const char* usage,
                    Result<std::vector<uint64_t>> (net::Client::*method)(uint64_t)) {
  return {usage, 2, [method](net::Client& c, const auto& w, bool json) -> Result<std::string> {
            auto ids = Ids(w, 1);
            if (!ids.ok()) return ids.status();
            return Render<std::vector<uint64_t>>(
                (c.*method)((*ids)[0]), json,
                [](Rendered& o, const std::vector<uint64_t>& r) { o.Add("users", JsonList(r)); });
          }};
}

// known-followers VIEWER TARGET [LIMIT], through a Client or a ClusterClient.
template <typename AnyClient>
Result<std::string> KnownFollowers(AnyClient& c, const std::vector<std::string>& w, bool json) {
  auto ids = Ids(w, 1);
  if (!ids.ok()) return ids.status();
  const uint64_t limit = ids->size() > 2 ? (*ids)[2] : 3;
  if (limit > 65535) return OutOfRange("limit", std::to_string(limit), 65535);
  return Render<net::KnownFollowersReply>(
      c.KnownFollowers((*ids)[0], (*ids)[1], static_cast<uint16_t>(limit)), json,
      [](Rendered& o, const auto& r) {
        o.Add("total", r.total);
        o.Add("users", JsonList(r.users));
      });
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
            for (const auto& f : r.fields) {
              if (f.name == "durability") {
                o.AddText(f.name, net::DurabilityCodeName(f.value));  // a mode, not a count
              } else if (f.name == "server_version") {  // major << 32 | minor << 16 | patch
                o.AddText(f.name, std::to_string(f.value >> 32) + "." +
                                      std::to_string((f.value >> 16) & 0xffff) + "." +
                                      std::to_string(f.value & 0xffff));
              } else {
                o.Add(f.name, f.value);
              }
            }
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
        [](net::Client& c, const auto& w, bool json) { return KnownFollowers(c, w, json); }}},
      {"remove-user",
       {"remove-user USER", 2,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          return Render<uint64_t>(
              c.RemoveUser((*ids)[0]), json,
              [](Rendered& o, const uint64_t& r) { o.Add("edges_removed", r); });
        }}},
      {"publish",
       {"publish AUTHOR POST [KIND] [TS_MS]", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids({w.begin(), w.begin() + 3}, 1);
          if (!ids.ok()) return ids.status();
          uint64_t kind = 0;
          std::optional<int64_t> ts;
          if (w.size() > 3) {
            auto k = ParseU64(w[3], "kind");
            if (!k.ok()) return k.status();
            if (*k > 255) return OutOfRange("kind", w[3], 255);
            kind = *k;
          }
          if (w.size() > 4) {
            auto t = ParseI64(w[4], "time");
            if (!t.ok()) return t.status();
            ts = *t;
          }
          return Render<net::PublishReply>(
              c.Publish((*ids)[0], (*ids)[1], static_cast<uint8_t>(kind), ts), json,
              [](Rendered& o, const auto& r) {
                o.AddInt("ts", r.ts);
                o.AddBool("retained", r.retained);
                o.Add("evicted", r.evicted);
              });
        }}},
      {"delete-post",
       {"delete-post AUTHOR POST", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          RELGRAPH_RETURN_IF_ERROR(c.DeletePost((*ids)[0], (*ids)[1]));
          return std::string(json ? "{\"deleted\":true}\n" : "deleted: true\n");
        }}},
      {"block",
       {"block USER BLOCKED", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          return Render<net::BlockReply>(c.Block((*ids)[0], (*ids)[1]), json,
                                         [](Rendered& o, const auto& r) {
                                           o.AddBool("created", r.created);
                                           o.AddInt("ts", r.ts);
                                           o.AddBool("unfollowed", (r.removed & 1) != 0);
                                           o.AddBool("lost_follower", (r.removed & 2) != 0);
                                           o.AddBool("dropped_request", (r.removed & 4) != 0);
                                         });
        }}},
      {"unblock", PairCommand("unblock USER BLOCKED", &net::Client::Unblock)},
      {"reject", PairCommand("reject USER REQUESTER", &net::Client::Reject)},
      {"withdraw", PairCommand("withdraw REQUESTER TARGET", &net::Client::Withdraw)},
      {"approve",
       {"approve USER REQUESTER", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          return Render<net::FollowReply>(c.Approve((*ids)[0], (*ids)[1]), json,
                                          [](Rendered& o, const auto& r) {
                                            o.AddBool("created", r.created);
                                            o.Add("relation", Rel(r.relation));
                                            o.AddInt("followed_at", r.followed_at);
                                          });
        }}},
      {"set-private",
       {"set-private USER on|off", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids({w.begin(), w.begin() + 2}, 1);
          if (!ids.ok()) return ids.status();
          if (w[2] != "on" && w[2] != "off") return Usage("set-private USER on|off");
          return Render<net::SetPrivateReply>(c.SetPrivate((*ids)[0], w[2] == "on"), json,
                                              [](Rendered& o, const auto& r) {
                                                o.AddBool("changed", r.changed);
                                                o.Add("approved", r.approved);
                                                o.AddInt("ts", r.ts);
                                              });
        }}},
      {"is-private",
       {"is-private USER", 2,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto ids = Ids(w, 1);
          if (!ids.ok()) return ids.status();
          return Render<bool>(c.IsPrivate((*ids)[0]), json,
                              [](Rendered& o, const bool& r) { o.AddBool("private", r); });
        }}},
      {"mute", ToggleCommand("mute USER OTHER", &net::Client::Mute, true)},
      {"unmute", ToggleCommand("unmute USER OTHER", &net::Client::Mute, false)},
      {"hide", ToggleCommand("hide AUTHOR FROM_USER", &net::Client::Hide, true)},
      {"unhide", ToggleCommand("unhide AUTHOR FROM_USER", &net::Client::Hide, false)},
      {"mutes", ListCommand("mutes USER", &net::Client::Mutes)},
      {"hides", ListCommand("hides AUTHOR", &net::Client::Hides)},
      {"ack",
       {"ack NAME LSN", 3,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          auto lsn = ParseU64(w[2], "LSN");
          if (!lsn.ok()) return lsn.status();
          RELGRAPH_RETURN_IF_ERROR(c.Ack(w[1], *lsn));
          return std::string(json ? "{\"acked\":true}\n" : "acked\n");
        }}},
      {"cursors",
       {"cursors", 1,
        [](net::Client& c, const auto&, bool json) -> Result<std::string> {
          auto list = c.Cursors();
          if (!list.ok()) return list.status();
          std::string out;
          for (const net::CursorEntry& k : *list) {
            if (json) {
              Rendered r;
              r.AddText("name", k.name);
              r.Add("acked_lsn", k.acked_lsn);
              r.AddInt("acked_ms", k.acked_ms);
              r.AddBool("expired", k.expired);
              out += r.Json();
            } else {
              out += k.name + " " + std::to_string(k.acked_lsn) + " at " +
                     std::to_string(k.acked_ms) + (k.expired ? " (expired)" : "") + "\n";
            }
          }
          return out;
        }}},
      {"delete-cursor",
       {"delete-cursor NAME", 2,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          RELGRAPH_RETURN_IF_ERROR(c.DeleteCursor(w[1]));
          return std::string(json ? "{\"deleted\":true}\n" : "deleted\n");
        }}},
      {"fetch-snapshot",
       {"fetch-snapshot FILE", 2,
        [](net::Client& c, const auto& w, bool json) {
          return Render<net::FetchSnapshotReply>(c.FetchSnapshot(w[1]), json,
                                                 [&](Rendered& o, const auto& r) {
                                                   o.Add("lsn", r.lsn);
                                                   o.Add("file_bytes", r.file_bytes);
                                                   o.AddText("file", w[1]);
                                                 });
        }}},
      {"promote",
       {"promote [--force]", 1,
        [](net::Client& c, const auto& w, bool json) -> Result<std::string> {
          const bool force = w.size() == 2 && w[1] == "--force";
          if (w.size() > 2 || (w.size() == 2 && !force)) return Usage("promote [--force]");
          return Render<net::PromoteReply>(c.Promote(force), json, [](Rendered& o, const auto& r) {
            o.Add("epoch", r.epoch);
            o.Add("epoch_id", r.epoch_id);
            o.Add("first_lsn", r.first_lsn);
          });
        }}},
      {"replication",
       {"replication", 1,
        [](net::Client& c, const auto&, bool json) -> Result<std::string> {
          auto r = c.Replication();
          if (!r.ok()) return r.status();
          Rendered o;
          o.AddText("role", r->role == net::ReplicationRole::kReplica ? "replica" : "primary");
          if (!r->primary.empty()) o.AddText("primary", r->primary);
          o.AddText("state", r->state);
          if (!r->message.empty()) o.AddText("message", r->message);
          o.Add("epoch", r->epoch);
          o.Add("epoch_id", r->epoch_id);
          o.Add("applied_lsn", r->applied_lsn);
          o.Add("primary_lsn", r->primary_lsn);
          o.Add("lag_ms", r->lag_ms);
          o.Add("sync_replicas", r->sync_replicas);
          std::string text, list;
          for (const net::ReplicaEntry& e : r->replicas) {
            Rendered x;
            x.AddText("name", e.name);
            x.Add("applied_lsn", e.applied_lsn);
            x.Add("durable_lsn", e.durable_lsn);
            x.Add("ack_age_ms", e.ack_age_ms);
            std::string j = x.Json();
            list += (list.empty() ? "" : ",") + j.substr(0, j.size() - 1);
            text += "replica " + e.name + ": applied " + std::to_string(e.applied_lsn) +
                    ", durable " + std::to_string(e.durable_lsn) + ", acked " +
                    std::to_string(e.ack_age_ms) + " ms ago\n";
          }
          o.Add("replicas", "[" + list + "]");
          std::string out = json ? o.Json() : o.Text();
          if (!json) out = out.substr(0, out.rfind("replicas: ")) + text;
          return out;
        }}},
  };
  return commands;
}

const char* kPageUsage = " USER [--limit=N] [--offset=N] [--after=TS:USER] [--viewer=V]";
const char* kFeedUsage = " USER [--limit=N] [--after=TS:POST] [--kinds=N,N,...]";

bool IsListPage(const std::string& name) {
  return name == "following" || name == "fans" || name == "friends" || name == "blocks" ||
         name == "requests";
}

// following, fans, friends, blocks or requests USER [options], through a Client or a
// ClusterClient.
template <typename AnyClient>
Result<std::string> ListPage(AnyClient& c, const std::vector<std::string>& words, bool json) {
  const std::string& name = words[0];
  auto q = ParsePageQuery(words, name + kPageUsage);
  if (!q.ok()) return q.status();
  if (name == "blocks" || name == "requests") {  // with the whole list's total
    auto page = name == "blocks" ? c.Blocks(*q) : c.Requests(*q);
    if (!page.ok()) return page.status();
    return RenderPage(net::PageReply{std::move(page->entries), page->next}, words, *q, json,
                      page->total);
  }
  auto page = name == "following" ? c.Following(*q) : name == "fans" ? c.Fans(*q) : c.Friends(*q);
  if (!page.ok()) return page.status();
  return RenderPage(*page, words, *q, json);
}

}  // namespace

Result<std::string> RunCommand(net::Client& client, const std::vector<std::string>& words,
                               bool json) {
  if (words.empty()) return UsageError("no command (try 'help')");
  const std::string& name = words[0];
  if (IsListPage(name)) return ListPage(client, words, json);
  if (name == "timeline" || name == "user-posts") {
    auto q = ParseFeedQuery(words, name + kFeedUsage);
    if (!q.ok()) return q.status();
    auto page = name == "timeline" ? client.Timeline(*q) : client.UserPosts(*q);
    if (!page.ok()) return page.status();
    return RenderFeed(*page, words, json);
  }
  auto it = Commands().find(name);
  if (it == Commands().end()) {
    return UsageError("unknown command '" + name + "' (try 'help')");
  }
  if (words.size() < it->second.min_words) return Usage(it->second.usage);
  return it->second.run(client, words, json);
}

Result<std::string> RunClusterCommand(net::ClusterClient& cluster,
                                      const std::vector<std::string>& words, bool json) {
  if (words.empty()) return UsageError("no command (try 'help')");
  const std::string& name = words[0];
  if (name == "map") {
    const net::ShardMap& m = cluster.map();
    if (!json) return net::EncodeShardMap(m) + "version " + std::to_string(m.version) + "\n";
    Rendered o;
    o.Add("version", m.version);
    o.Add("buckets", m.buckets);
    std::string shards;
    for (const net::ShardInfo& s : m.shards) {
      Rendered x;
      x.Add("id", s.id);
      x.AddText("address", s.address);
      std::string j = x.Json();
      shards += (shards.empty() ? "" : ",") + j.substr(0, j.size() - 1);
    }
    o.Add("shards", "[" + shards + "]");
    return o.Json();
  }
  if (name == "barrier") {
    RELGRAPH_RETURN_IF_ERROR(cluster.Barrier());
    return std::string(json ? "{\"quiet\":true}\n" : "quiet: every change is applied\n");
  }
  if (IsListPage(name)) return ListPage(cluster, words, json);
  if (name == "known-followers" && words.size() >= 3) return KnownFollowers(cluster, words, json);
  // Every other command names its user first (the follower, the author, the reader, ...).
  auto user = words.size() >= 2 ? ParseU64(words[1], "user") : UsageError("");
  if (!user.ok()) {
    const bool known = Commands().contains(name) || name == "timeline" || name == "user-posts" ||
                       name == "blocks" || name == "requests";
    if (!known) return UsageError("unknown command '" + name + "' (try 'help')");
    return UsageError("'" + name +
                                   "' names no user first: in a cluster, ask a shard "
                                   "(relgraph-cli -p PORT), or use map or barrier");
  }
  return cluster.OnOwnerOf<std::string>(
      *user, [&](net::Client& shard) { return RunCommand(shard, words, json); });
}

Result<SubscribeArgs> ParseSubscribe(const std::vector<std::string>& words) {
  SubscribeArgs args;
  args.options.from = net::SubscribeFrom::kNow;
  for (size_t i = 1; i < words.size(); ++i) {
    const auto [key, value] = Option(words[i]);
    if (key == "--from" && value == "now") {
      args.options.from = net::SubscribeFrom::kNow;
      args.options.lsn = 0;
    } else if (key == "--from") {
      auto lsn = ParseU64(value, "LSN");
      if (!lsn.ok()) return lsn.status();
      args.options.from = net::SubscribeFrom::kLsn;
      args.options.lsn = *lsn;
    } else if (key == "--kinds") {  // "": all
      args.options.kinds = 0;
      std::stringstream list(value);
      for (std::string k; std::getline(list, k, ',');) {
        uint32_t bit = 0;
        if (!k.empty() && k.find_first_not_of("0123456789") == std::string::npos) {
          auto n = ParseU64(k, "event kind");  // its number in docs/protocol.md
          if (!n.ok()) return n.status();
          if (*n > 31 || ((net::kAllEventKinds >> *n) & 1) == 0) {
            return UsageError("event kind " + k + " is not one (docs/protocol.md, \"The change stream\")");
          }
          bit = uint32_t{1} << *n;
        } else {
          auto mask = net::ParseEventKinds(k);
          if (!mask.ok()) return UsageError(mask.status().message());
          bit = *mask;
        }
        args.options.kinds |= bit;
      }
    } else if (key == "--name") {
      args.options.name = value;
    } else if (key == "--count") {
      auto n = ParseU64(value, "count");
      if (!n.ok()) return n.status();
      args.count = *n;
    } else {
      return Usage(kSubscribeUsage);
    }
  }
  return args;
}

std::string CommandUsage() {
  std::string out;
  for (const auto& [name, c] : Commands()) out += std::string("  ") + c.usage + "\n";
  for (const char* list : {"following", "fans", "friends", "blocks", "requests"}) {
    out += std::string("  ") + list + kPageUsage + "\n";
  }
  for (const char* list : {"timeline", "user-posts"}) {
    out += std::string("  ") + list + kFeedUsage + "\n";
  }
  out += std::string("  ") + kSubscribeUsage + "\n";
  out += "  (timeline and user-posts --kinds: post kinds, numbers 0..63; subscribe --kinds: event\n"
         "   kinds by name, follow,publish,..., or by number, as docs/protocol.md lists them)\n";
  out += "  with --cluster: map | barrier (and every command about a user)\n";
  return out;
}

std::string FormatError(const Status& status, bool json) {
  if (!json) return "error: " + status.ToString() + "\n";
  Rendered r;
  r.AddText("error", CodeName(status.code()));
  r.AddText("message", status.message());
  if (status.detail() != 0 && !IsUsageError(status)) r.AddInt("detail", status.detail());
  return r.Json();
}

}  // namespace relgraph::cli
