#include "net/protocol/json_codec.h"

#include <cmath>

namespace relgraph::net {

std::vector<std::string_view> SplitWireNames(std::string_view names) {
  std::vector<std::string_view> out;
  while (!names.empty()) {
    const size_t comma = names.find(',');
    std::string_view name = names.substr(0, comma);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (!name.empty()) out.push_back(name);
    if (comma == std::string_view::npos) break;
    names.remove_prefix(comma + 1);
  }
  return out;
}

std::string_view ReplicationRoleName(ReplicationRole role) {
  switch (role) {
    case ReplicationRole::kPrimary:
      return "primary";
    case ReplicationRole::kReplica:
      return "replica";
  }
  return "unknown";
}

std::string_view SubscribeFromName(SubscribeFrom from) {
  switch (from) {
    case SubscribeFrom::kLsn:
      return "lsn";
    case SubscribeFrom::kNow:
      return "now";
    case SubscribeFrom::kCursor:
      return "cursor";
  }
  return "unknown";
}

Status ParseJsonCursor(std::string_view text, int64_t* ts, uint64_t* id) {
  const size_t colon = text.find(':');
  const auto bad = [&] {
    return Status::InvalidArgument("not a cursor TS:ID (a page's `next`): \"" + std::string(text) +
                                   "\"");
  };
  if (colon == std::string_view::npos) return bad();
  const std::string_view t = text.substr(0, colon), i = text.substr(colon + 1);
  const auto r1 = std::from_chars(t.data(), t.data() + t.size(), *ts);
  const auto r2 = std::from_chars(i.data(), i.data() + i.size(), *id);
  if (t.empty() || i.empty() || r1.ec != std::errc() || r1.ptr != t.data() + t.size() ||
      r2.ec != std::errc() || r2.ptr != i.data() + i.size()) {
    return bad();
  }
  return Status::OK();
}

namespace json_internal {

Status TypeError(std::string_view path, std::string_view expected, const JsonValue& got) {
  std::string shown = std::string(JsonKindName(got.kind));
  if (got.kind == JsonValue::Kind::kNumber) shown += " " + got.text;
  if (got.kind == JsonValue::Kind::kString) {
    shown += " \"" + got.text.substr(0, 40) + (got.text.size() > 40 ? "...\"" : "\"");
  }
  return Status::InvalidArgument(std::string(path) + ": expected " + std::string(expected) +
                                 ", got " + shown);
}

Status ReadInteger(const JsonValue& v, std::string_view path, int64_t min, uint64_t max,
                   bool is_signed, int64_t* as_signed, uint64_t* as_unsigned) {
  const std::string range =
      is_signed ? std::to_string(min) + ".." + std::to_string(max) : "0.." + std::to_string(max);
  if (v.kind != JsonValue::Kind::kNumber && v.kind != JsonValue::Kind::kString) {
    return TypeError(path, "an integer " + range, v);
  }
  const std::string& t = v.text;
  const char* end = t.data() + t.size();
  std::from_chars_result r{};
  if (is_signed) {
    r = std::from_chars(t.data(), end, *as_signed);
  } else {
    r = t.empty() || t[0] == '-' ? std::from_chars_result{t.data(), std::errc::invalid_argument}
                                 : std::from_chars(t.data(), end, *as_unsigned);
  }
  if (r.ec == std::errc::result_out_of_range ||
      (r.ec == std::errc() && r.ptr == end &&
       (is_signed ? (*as_signed < min || *as_signed > static_cast<int64_t>(max))
                  : *as_unsigned > max))) {
    return Status::InvalidArgument(std::string(path) + ": " + t + " is out of range (" + range +
                                   ")");
  }
  if (r.ec != std::errc() || r.ptr != end) {
    // "-1" for an unsigned field is out of range; "1.5" or "x" is no integer.
    if (!is_signed && !t.empty() && t[0] == '-' && t.find_first_not_of("-0123456789") == t.npos) {
      return Status::InvalidArgument(std::string(path) + ": " + t + " is out of range (" + range +
                                     ")");
    }
    return TypeError(path, "an integer " + range, v);
  }
  return Status::OK();
}

JsonValue SplitListText(const JsonValue& v) {
  JsonValue list;
  list.kind = JsonValue::Kind::kArray;
  std::string_view rest = v.text;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    JsonValue item;
    item.kind = JsonValue::Kind::kString;
    item.text = std::string(rest.substr(0, comma));
    list.items.push_back(std::move(item));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return list;
}

std::string MemberPath(std::string_view path, std::string_view name) {
  return std::string(path) + "." + std::string(name);
}

Status UnknownMember(std::string_view path, std::string_view name,
                     const std::vector<std::string_view>& known) {
  std::string list;
  for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
  return Status::InvalidArgument(std::string(path) + ": unknown member \"" + std::string(name) +
                                 "\" (its members: " + (list.empty() ? "none" : list) + ")");
}

}  // namespace json_internal
}  // namespace relgraph::net
