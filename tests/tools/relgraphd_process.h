// A real relgraphd process for tests: started with fork/exec (RELGRAPHD_PATH), its port read
// from its log, stopped by its pid.
#pragma once

#include <doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace relgraph {

// Starts relgraphd with `args`, stderr to `log`; returns the pid.
inline pid_t Spawn(const std::vector<std::string>& args, const std::string& log) {
  std::fflush(nullptr);  // or the child's freopen would write our buffered output again
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::vector<char*> argv;
    std::string path = RELGRAPHD_PATH;
    argv.push_back(path.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    freopen(log.c_str(), "w", stderr);
    freopen("/dev/null", "w", stdout);
    ::execv(path.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

inline int WaitExit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The port from relgraphd's "listening on HOST:PORT" log line, waiting up to 10 s.
inline uint16_t WaitForPort(const std::string& log) {
  const std::regex re("listening on [0-9.]+:([0-9]+)");
  for (int i = 0; i < 500; ++i) {
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
