// How clients print change-stream events: the JSON field names of every kind are exactly the
// table in docs/change-stream.md ("JSON field names"), so the two cannot drift apart.
#include "net/client/event_format.h"

#include <doctest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace relgraph::net {
namespace {

// The table's rows: each kind named in a row's first cell -> the backticked names of its second.
std::map<std::string, std::vector<std::string>> DocumentedFields() {
  std::ifstream in(std::string(RELGRAPH_DOCS_DIR) + "/change-stream.md");
  REQUIRE_MESSAGE(in.good(), "cannot read docs/change-stream.md");
  std::map<std::string, std::vector<std::string>> out;
  bool in_section = false, in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#", 0) == 0) in_section = line == "### JSON field names";
    if (!in_section) continue;
    if (line.rfind("|", 0) != 0) {
      if (in_table) break;  // the table ends at its first line that is not a row
      continue;
    }
    in_table = true;
    const size_t second = line.find('|', 1), third = line.find('|', second + 1);
    REQUIRE(third != std::string::npos);
    const std::string kinds = line.substr(1, second - 1);
    const std::string cell = line.substr(second + 1, third - second - 1);
    std::vector<std::string> names;
    for (size_t at = cell.find('`'); at != std::string::npos; at = cell.find('`', at + 1)) {
      const size_t end = cell.find('`', at + 1);
      names.push_back(cell.substr(at + 1, end - at - 1));
      at = end;
    }
    if (names.empty()) continue;  // the header and its rule
    size_t start = 0;
    for (;;) {  // "mute, unmute": one row for both
      const size_t comma = kinds.find(',', start);
      std::string kind = kinds.substr(start, comma - start);
      kind.erase(0, kind.find_first_not_of(' '));
      kind.erase(kind.find_last_not_of(' ') + 1);
      CHECK_MESSAGE(out.count(kind) == 0, kind, " has two rows");
      out[kind] = names;
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

// The keys of one flat JSON object, in order.
std::vector<std::string> Keys(const std::string& json) {
  std::vector<std::string> keys;
  for (size_t at = json.find('"'); at != std::string::npos;) {
    const size_t end = json.find('"', at + 1);
    REQUIRE(end != std::string::npos);
    if (json[end + 1] == ':') keys.push_back(json.substr(at + 1, end - at - 1));
    at = json.find('"', end + 1);
  }
  return keys;
}

TEST_CASE("event_format: every kind's JSON fields are the ones docs/change-stream.md lists") {
  const auto documented = DocumentedFields();
  size_t kinds = 0;
  for (uint8_t k = 1; k < 32; ++k) {
    if (((kAllEventKinds >> k) & 1) == 0) continue;
    ++kinds;
    WireEvent e;
    e.lsn = 12;
    e.kind = static_cast<EventKind>(k);
    e.ts = 1700000000000;
    e.a = 7;
    e.b = 9;
    e.friends = true;
    e.detail = 5;
    e.evicted = 3;
    const std::string name(EventKindName(e.kind));
    CAPTURE(name);
    const std::string json = EventJson(e, false);
    CAPTURE(json);
    CHECK(json.find("\"kind\":\"" + name + "\"") != std::string::npos);
    const auto row = documented.find(name);
    REQUIRE_MESSAGE(row != documented.end(), "no row for ", name);
    CHECK(Keys(json) == row->second);
  }
  CHECK(documented.size() == kinds);  // and no row for a kind that does not exist
}

TEST_CASE("event_format: the JSON shows the event's values under their names") {
  WireEvent e;
  e.lsn = 12;
  e.kind = EventKind::kFollow;
  e.ts = 1700000000000;
  e.a = 1;
  e.b = 2;
  e.friends = true;
  CHECK(EventJson(e) ==
        "{\"lsn\":12,\"kind\":\"follow\",\"follower\":1,\"followee\":2,\"ts\":1700000000000,"
        "\"friends\":true}\n");
  e.kind = EventKind::kBlock;
  e.friends = false;
  e.detail = 2 | 4;
  CHECK(EventJson(e, false) ==
        "{\"lsn\":12,\"kind\":\"block\",\"user\":1,\"blocked\":2,\"ts\":1700000000000,"
        "\"unfollowed\":false,\"lost_follower\":true,\"dropped_request\":true}");
  e.kind = EventKind::kSetPrivate;
  e.b = 0;
  e.detail = 0;
  CHECK(EventJson(e, false) ==
        "{\"lsn\":12,\"kind\":\"set_private\",\"user\":1,\"ts\":1700000000000,\"private\":false}");
}

}  // namespace
}  // namespace relgraph::net
