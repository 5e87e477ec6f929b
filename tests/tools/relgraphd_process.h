// A real relgraphd process for tests: started with fork/exec (RELGRAPHD_PATH), its port read
// from its log, stopped by its pid.
#pragma once

#include <doctest.h>
#include <signal.h>
#include <sys/wait.h>

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

// The last `lines` lines of `log`, indented, for a failure message.
inline std::string LogTail(const std::string& log, size_t lines = 30) {
  std::ifstream in(log);
  std::vector<std::string> all;
  for (std::string line; std::getline(in, line);) all.push_back(line);
  std::string tail;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
    tail += "  " + all[i] + "\n";
  }
  return tail.empty() ? "  (empty)\n" : tail;
}

// Whether `pid` (a child of this process) has ended; it is left to be reaped by WaitExit.
inline bool ChildEnded(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

// The port from relgraphd's "listening on HOST:PORT" log line, waiting up to `limit` (30 s: a
// start that recovers a graph beside a cold compile on two cores took more than 10). With
// `pid`, a process that ends first fails at once. Either failure quotes the end of the log, so
// a failing test says why the server did not start (a port taken, a join that hung).
inline uint16_t WaitForPort(const std::string& log, pid_t pid = 0,
                            std::chrono::seconds limit = std::chrono::seconds(30)) {
  const std::regex re("listening on [0-9.]+:([0-9]+)");
  const auto read = [&] {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const bool late = std::chrono::steady_clock::now() > deadline;
    const bool ended = pid > 0 && ChildEnded(pid);
    const std::string s = read();
    std::smatch m;
    if (std::regex_search(s, m, re)) return static_cast<uint16_t>(std::stoi(m[1]));
    if (ended) {
      FAIL("relgraphd (pid " << pid << ") ended before listening; " << log << " ends:\n"
                             << LogTail(log));
    }
    if (late) {
      FAIL("relgraphd did not start listening within " << limit.count() << " s; " << log
                                                       << " ends:\n"
                                                       << LogTail(log));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace relgraph
