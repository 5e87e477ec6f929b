// Child processes for tests that need a real server: one fork/exec, with the output sent to
// files and, optionally, another user (PostgreSQL refuses to run as root).
#pragma once

#include <doctest.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <signal.h>
#include <string>
#include <thread>
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

// Sends SIGSTOP and returns once every thread of `pid` is stopped. kill() returns as soon as
// the signal is queued: one thread takes it and only then stops the others, so for a while
// (milliseconds on a busy machine) the rest of the process still serves requests, and a test
// that expects the process to hang would see it answer. Up to 5 s.
inline void PauseProcess(pid_t pid) {
  REQUIRE(::kill(pid, SIGSTOP) == 0);
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    bool all_stopped = true;
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
      std::ifstream stat(task.path() / "stat");
      std::string line;
      std::getline(stat, line);
      // "tid (comm) S ...": the state follows the last ')'.
      const size_t close = line.rfind(')');
      if (close == std::string::npos || close + 2 >= line.size()) continue;  // the thread ended
      const char state = line[close + 2];
      if (state != 'T' && state != 't') all_stopped = false;
    }
    if (all_stopped) return;
    REQUIRE_MESSAGE(std::chrono::steady_clock::now() < deadline,
                    "process " << pid << " did not stop within 5 s of SIGSTOP");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace relgraph::testing
