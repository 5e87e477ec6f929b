#include "net/auth/permissions.h"

namespace relgraph::net {
namespace {

constexpr std::string_view kNames[] = {"read", "write", "stream", "admin", "replication"};

}  // namespace

std::string PermissionsText(Permissions p) {
  if (p == kPermAll) return "all";
  if (p == kPermNone) return "none";
  std::string text;
  for (size_t bit = 0; bit < std::size(kNames); ++bit) {
    if ((p & (1u << bit)) == 0) continue;
    if (!text.empty()) text += ",";
    text += kNames[bit];
  }
  return text;
}

Result<Permissions> ParsePermissions(std::string_view text) {
  if (text == "all") return kPermAll;
  Permissions p = kPermNone;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view word = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    bool known = false;
    for (size_t bit = 0; bit < std::size(kNames); ++bit) {
      if (word == kNames[bit]) {
        p |= static_cast<Permissions>(1u << bit);
        known = true;
      }
    }
    if (!known) {
      return Status::InvalidArgument("unknown permission \"" + std::string(word) +
                                     "\" (read, write, stream, admin, replication or all)");
    }
  }
  if (p == kPermNone) return Status::InvalidArgument("no permission named");
  return p;
}

Status PermissionDenied(Opcode op, std::string_view client, Permissions held) {
  const Permissions need = RequiredPermissions(op);
  std::string lacks = PermissionsText(need);
  if ((need & (need - 1)) != 0) {  // several bits: any one would do
    std::string any;
    for (char& c : lacks) {
      if (c == ',') c = '|';
    }
    any = "one of " + lacks;
    lacks = any;
  }
  return Status(Code::kPermissionDenied, std::string(OpcodeName(op)) + " needs the " + lacks +
                                             " permission; client \"" + std::string(client) +
                                             "\" holds " + PermissionsText(held));
}

}  // namespace relgraph::net
