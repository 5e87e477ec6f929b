// RequestText: a request body as short readable text, for the slow-command log
// (docs/protocol.md, "Slow-command log"): the decoded request's field values in wire order,
// space-separated, like a command line's arguments.
//
//   integers, enums   decimal            bool      true | false
//   opt<T>            T, or - if absent  string    "..." (\" \\ and \xNN for other bytes)
//   list<T>           [a,b,...]          struct    {a b ...}
//
// At most `max_bytes` bytes: a longer rendering is cut and ends in "...". HELLO shows its
// version only (a token is a secret); a body that does not decode as its command's request,
// or an opcode that is no request, shows as "<N bytes>".
//
// Thread-safety: a pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace relgraph::net {

inline constexpr size_t kRequestTextMax = 128;

std::string RequestText(uint8_t opcode, std::string_view body, size_t max_bytes = kRequestTextMax);

}  // namespace relgraph::net
