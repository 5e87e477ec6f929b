#include "tools/cli/cli_args.h"

#include <sstream>

namespace relgraph::cli {

Status Usage(const std::string& line) {
  return UsageError("usage: " + line);
}

Status OutOfRange(const std::string& what, const std::string& value, uint64_t max,
                  int64_t min) {
  return UsageError(what + " " + value + " is out of range [" + std::to_string(min) + ", " +
                    std::to_string(max) + "]");
}

Result<uint64_t> ParseU64(const std::string& s, const char* what) {
  return ParseInt<uint64_t>(s, what);
}
Result<int64_t> ParseI64(const std::string& s, const char* what) {
  return ParseInt<int64_t>(s, what);
}

Result<std::vector<uint64_t>> Ids(const std::vector<std::string>& w, size_t from) {
  std::vector<uint64_t> ids;
  for (size_t i = from; i < w.size(); ++i) {
    auto v = ParseU64(w[i], "user");
    if (!v.ok()) return v.status();
    ids.push_back(*v);
  }
  return ids;
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

Result<std::pair<int64_t, uint64_t>> ParseCursor(const std::string& value, const std::string& use) {
  const size_t colon = value.find(':');
  if (colon == std::string::npos) return Usage(use);
  auto ts = ParseI64(value.substr(0, colon), "cursor time");
  if (!ts.ok()) return ts.status();
  auto id = ParseU64(value.substr(colon + 1), "cursor id");
  if (!id.ok()) return id.status();
  return std::pair{*ts, *id};
}

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

}  // namespace relgraph::cli
