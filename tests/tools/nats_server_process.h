// A real nats-server with JetStream for tests: started with fork/exec on a random loopback
// port (-p -1), its port read from its log, stopped by its pid.
#pragma once

#include <doctest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "tests/tools/child_process.h"

namespace relgraph::testing {

struct NatsServerProcess {
  // Stores JetStream data under `dir`; its log goes to dir/nats.log.
  explicit NatsServerProcess(const std::string& dir) {
    const std::string log = dir + "/nats.log";
    pid = SpawnProgram({NATS_SERVER_PATH, "-js", "-a", "127.0.0.1", "-p", "-1", "-sd", dir},
                       {.stderr_path = log});
    const std::regex re("Listening for client connections on [0-9.]+:([0-9]+)");
    for (int i = 0; i < 500 && port == 0; ++i) {
      std::ifstream in(log);
      std::stringstream text;
      text << in.rdbuf();
      std::smatch m;
      const std::string s = text.str();
      if (std::regex_search(s, m, re)) port = static_cast<uint16_t>(std::stoi(m[1]));
      if (port == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE_MESSAGE(port != 0, "nats-server did not start listening (see " << log << ")");
  }
  ~NatsServerProcess() {
    ::kill(pid, SIGTERM);
    WaitExit(pid);
  }
  std::string url() const { return "nats://127.0.0.1:" + std::to_string(port); }

  pid_t pid = -1;
  uint16_t port = 0;
};

}  // namespace relgraph::testing
