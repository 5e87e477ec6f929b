// relgraph-admin token NAME PERMISSIONS: a new client's random token and its clients-file line
// (docs/security.md, "The clients file").
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace relgraph::admin {

// Prints the token (64 hex digits from /dev/urandom) on one line, then the line to add to the
// clients file: NAME PERMISSIONS token-sha256:HEX. Exit status: 0, or 2 for a bad name or
// permission list (the error names it), 1 when no randomness could be read.
int TokenCommand(const std::vector<std::string>& positional, std::ostream& out, std::ostream& err);

}  // namespace relgraph::admin
