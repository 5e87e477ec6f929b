// Child processes for tests that need a real server: one fork/exec, with the output sent to
// files and, optionally, another user (PostgreSQL refuses to run as root).
#pragma once

#include <doctest.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace relgraph::testing {

struct SpawnOptions {
  std::string stderr_path = "/dev/null";
  std::string stdout_path = "/dev/null";
  bool append = false;             // open the files for appending (several processes, one log)
  const passwd* run_as = nullptr;  // switch to this user before exec
};

// Starts argv[0] (a path) with argv; returns its pid. The child exits 127 when exec fails,
// 126 when it cannot become `run_as`.
inline pid_t SpawnProgram(const std::vector<std::string>& argv, const SpawnOptions& options) {
  std::fflush(nullptr);  // or the child's freopen would write our buffered output again
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const char* mode = options.append ? "a" : "w";
    freopen(options.stderr_path.c_str(), mode, stderr);
    freopen(options.stdout_path.c_str(), mode, stdout);
    const passwd* user = options.run_as;
    if (user && (::setgid(user->pw_gid) != 0 || ::setuid(user->pw_uid) != 0)) _exit(126);
    std::vector<std::string> copy = argv;
    std::vector<char*> args;
    for (auto& a : copy) args.push_back(a.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

// Waits for the child; its exit code, or 128 + the signal that ended it.
inline int WaitExit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace relgraph::testing
