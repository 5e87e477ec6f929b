// relgraph-admin's commands, each a function over parsed arguments, so that tests call them
// without a process. Output goes to `out`, errors to `err`; the return value is the exit code
// (0 ok, 1 failure, 2 usage). Every command that works on a data directory takes its lock, so
// it refuses a directory a running relgraphd (or another tool) holds.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace relgraph::admin {

int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace relgraph::admin
