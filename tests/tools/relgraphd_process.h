// A real relgraphd process for tests: started with fork/exec (RELGRAPHD_PATH), its port read
// from its log, stopped by its pid.
#pragma once

#include <doctest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/tools/child_process.h"

namespace relgraph {

// Starts relgraphd with `args`, stderr to `log`; returns the pid.
inline pid_t Spawn(const std::vector<std::string>& args, const std::string& log) {
  std::vector<std::string> argv = {RELGRAPHD_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  return testing::SpawnProgram(argv, {.stderr_path = log});
}

using testing::WaitExit;

// The port from relgraphd's "listening on HOST:PORT" log line, waiting up to 30 s (a start
// that recovers a graph beside a cold compile on two cores took more than 10).
inline uint16_t WaitForPort(const std::string& log) {
  const std::regex re("listening on [0-9.]+:([0-9]+)");
  for (int i = 0; i < 1500; ++i) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    std::smatch m;
    const std::string s = text.str();
    if (std::regex_search(s, m, re)) return static_cast<uint16_t>(std::stoi(m[1]));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  FAIL("relgraphd did not start listening");
  return 0;
}

}  // namespace relgraph
