// Runs a shell command for tests of the command-line tools: its exit code and standard output.
#pragma once

#include <doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace relgraph::testing {

struct Ran {
  int exit_code = -1;  // -1 when the command did not exit normally
  std::string out;     // standard output (add 2>&1 to the command for stderr too)
};

inline Ran RunShell(const std::string& command) {
  Ran ran;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) ran.out.append(buf, n);
  const int status = ::pclose(pipe);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

}  // namespace relgraph::testing
