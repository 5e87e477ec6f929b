// How relgraph-cli reads a command's words: whole numbers in range, --key=value options,
// cursors, the options every page and feed takes. Every error is a usage error
// (cli_commands.h, IsUsageError) that names the bad word or shows the usage line.
//
// Thread-safety: pure functions.
#pragma once

#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "net/protocol/messages.h"
#include "storage/status.h"
#include "tools/cli/cli_commands.h"

namespace relgraph::cli {

// "usage: LINE", a usage error.
Status Usage(const std::string& line);
// "limit 100000 is out of range [0, 65535]".
Status OutOfRange(const std::string& what, const std::string& value, uint64_t max,
                  int64_t min = 0);

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
Result<uint64_t> ParseU64(const std::string& s, const char* what);
Result<int64_t> ParseI64(const std::string& s, const char* what);
// The user ids w[from..].
Result<std::vector<uint64_t>> Ids(const std::vector<std::string>& w, size_t from);

// Splits "--key=value" into (key, value).
std::pair<std::string, std::string> Option(const std::string& a);
Result<uint16_t> ParseLimit(const std::string& value);
// "TS:ID", the form every page prints as its next cursor.
Result<std::pair<int64_t, uint64_t>> ParseCursor(const std::string& value, const std::string& use);

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
Result<net::PageQuery> ParsePageQuery(const std::vector<std::string>& w, const std::string& use);
// USER [--limit=N] [--after=TS:POST] [--kinds=N,N,...]: post kinds, numbers 0..63
Result<net::FeedQuery> ParseFeedQuery(const std::vector<std::string>& w, const std::string& use);

}  // namespace relgraph::cli
