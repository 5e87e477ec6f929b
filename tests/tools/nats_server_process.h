// A real nats-server with JetStream for tests: started with fork/exec on a random loopback
// port (-p -1), its port read from its log, stopped by its pid; killed and restarted on the
// same port and store to test what survives its crash.
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

namespace relgraph::testing {

struct NatsServerProcess {
  // Stores JetStream data under `dir`; each start logs to dir/nats.<start>.log.
  // `extra`: more nats-server arguments (its TLS: --tls --tlscert F --tlskey F ...).
  explicit NatsServerProcess(const std::string& dir, std::vector<std::string> extra = {})
      : dir_(dir), extra_(std::move(extra)) {
    Start("-1");
  }
  ~NatsServerProcess() {
    if (pid > 0) {
      ::kill(pid, SIGTERM);
      WaitExit(pid);
    }
  }
  // SIGKILL: the server dies as in a crash, with what its file store has on disk.
  void Kill() {
    ::kill(pid, SIGKILL);
    WaitExit(pid);
    pid = -1;
  }
  // Starts it again on the same port with the same store (after Kill).
  void Restart() {
    REQUIRE(pid < 0);
    Start(std::to_string(port));
  }
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port); }

  pid_t pid = -1;
  uint16_t port = 0;

 private:
  void Start(const std::string& port_arg) {
    const std::string log = dir_ + "/nats." + std::to_string(++starts_) + ".log";
    std::vector<std::string> args = {NATS_SERVER_PATH, "-js", "-a",  "127.0.0.1",
                                     "-p",             port_arg, "-sd", dir_};
    args.insert(args.end(), extra_.begin(), extra_.end());
    pid = SpawnProgram(args, {.stderr_path = log});
    const std::regex re("Listening for client connections on [0-9.]+:([0-9]+)");
    uint16_t listening = 0;
    for (int i = 0; i < 500 && listening == 0; ++i) {
      std::ifstream in(log);
      std::stringstream text;
      text << in.rdbuf();
      std::smatch m;
      const std::string s = text.str();
      if (std::regex_search(s, m, re)) listening = static_cast<uint16_t>(std::stoi(m[1]));
      if (listening == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE_MESSAGE(listening != 0, "nats-server did not start listening (see " << log << ")");
    port = listening;
  }

  std::string dir_;
  std::vector<std::string> extra_;
  int starts_ = 0;
};

}  // namespace relgraph::testing
