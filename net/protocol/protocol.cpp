#include "net/protocol/protocol.h"

namespace relgraph::net {

bool OpcodeFromName(std::string_view name, Opcode* out) {
#define RELGRAPH_OPCODE_MATCH(id, value, n) \
  if (name == n) {                          \
    *out = Opcode::id;                      \
    return true;                            \
  }
  RELGRAPH_OPCODES(RELGRAPH_OPCODE_MATCH)
#undef RELGRAPH_OPCODE_MATCH
  return false;
}

}  // namespace relgraph::net
