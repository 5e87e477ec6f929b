// relgraph-admin: offline operations on relgraph data directories and snapshot files.
#include <iostream>
#include <string>
#include <vector>

#include "tools/admin/admin_commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return relgraph::admin::Run(args, std::cout, std::cerr);
}
