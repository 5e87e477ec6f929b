// A three-node NATS cluster with JetStream for tests, on loopback: three nats-server
// processes (NATS_SERVER_PATH), each with its own client port, route port, store directory
// and server name, routed to each other as one cluster (docs/cluster.md, "Three NATS
// nodes"). The constructor returns once JetStream has a meta leader (it answers account
// info on every node) that can place three replicas. One node at a time can be killed (SIGKILL, as
// in a crash), restarted on its ports with its store, paused (SIGSTOP: a hung or partitioned node)
// and resumed.
//
//   testing::NatsClusterProcess nats(dir.path());
//   relgraph-admin cluster init --nats=<nats.urls()> --nats-replicas=3 ...
//   nats.Kill(1); ...; nats.Restart(1);
//
// Thread-safety: one test thread.
#pragma once

#include <doctest.h>
#include <nats/nats.h>
#include <signal.h>

#include <array>
#include <chrono>
#include <string>
#include <thread>

#include "tests/tools/child_process.h"
#include "tests/tools/free_port.h"

namespace relgraph::testing {

class NatsClusterProcess {
 public:
  static constexpr int kNodes = 3;

  // Node i (0..2) stores under dir/nats<i> and logs to dir/nats<i>.<start>.log.
  explicit NatsClusterProcess(const std::string& dir) : dir_(dir) {
    for (int i = 0; i < kNodes; ++i) {
      client_port_[i] = FreeLoopbackPort();
      route_port_[i] = FreeLoopbackPort();
    }
    for (int i = 0; i < kNodes; ++i) Start(i);
    WaitReady();
  }
  ~NatsClusterProcess() {
    for (int i = 0; i < kNodes; ++i) {
      if (pid_[i] <= 0) continue;
      ::kill(pid_[i], SIGCONT);  // a paused node would not see the SIGTERM
      ::kill(pid_[i], SIGTERM);
      WaitExit(pid_[i]);
    }
  }
  NatsClusterProcess(const NatsClusterProcess&) = delete;
  NatsClusterProcess& operator=(const NatsClusterProcess&) = delete;

  // "nats://127.0.0.1:P0,nats://127.0.0.1:P1,nats://127.0.0.1:P2": what --nats and --cluster
  // take.
  std::string urls() const {
    std::string all;
    for (int i = 0; i < kNodes; ++i) all += (i > 0 ? "," : "") + url(i);
    return all;
  }
  std::string url(int i) const { return "nats://127.0.0.1:" + std::to_string(client_port_[i]); }

  // SIGKILL node i: it dies as in a crash, with what its file store has on disk.
  void Kill(int i) {
    REQUIRE(pid_[i] > 0);
    ::kill(pid_[i], SIGKILL);
    WaitExit(pid_[i]);
    pid_[i] = -1;
  }
  // Starts node i again on its ports with its store (after Kill), and waits until JetStream
  // answers on it.
  void Restart(int i) {
    REQUIRE(pid_[i] < 0);
    Start(i);
    WaitReady();
  }
  // SIGSTOP / SIGCONT node i: it stops answering without closing a connection.
  void Stop(int i) { PauseProcess(pid_[i]); }
  void Cont(int i) { REQUIRE(::kill(pid_[i], SIGCONT) == 0); }
  pid_t pid(int i) const { return pid_[i]; }

 private:
  void Start(int i) {
    std::string routes;
    for (int j = 0; j < kNodes; ++j) {
      if (j != i) {
        routes += (routes.empty() ? "" : ",") + std::string("nats://127.0.0.1:") +
                  std::to_string(route_port_[j]);
      }
    }
    const std::string base = dir_ + "/nats" + std::to_string(i);
    const std::string log = base + "." + std::to_string(++starts_[i]) + ".log";
    pid_[i] = SpawnProgram(
        {NATS_SERVER_PATH, "-js", "-a", "127.0.0.1", "-p", std::to_string(client_port_[i]), "-sd",
         base, "--server_name", "n" + std::to_string(i), "--cluster_name", "relgraph-test",
         "--cluster", "nats://127.0.0.1:" + std::to_string(route_port_[i]), "--routes", routes},
        {.stderr_path = log});
  }

  // Until every running node answers JetStream account info (a meta leader is elected and
  // the node knows it), up to 30 s.
  void WaitReady() {
    for (int i = 0; i < kNodes; ++i) {
      if (pid_[i] <= 0) continue;
      bool ready = false;
      for (int attempt = 0; attempt < 300 && !ready; ++attempt) {
        natsConnection* nc = nullptr;
        if (natsConnection_ConnectTo(&nc, url(i).c_str()) == NATS_OK) {
          jsCtx* js = nullptr;
          jsAccountInfo* ai = nullptr;
          jsOptions o;
          jsOptions_Init(&o);
          o.Wait = 500;
          if (natsConnection_JetStream(&js, nc, &o) == NATS_OK &&
              js_GetAccountInfo(&ai, js, nullptr, nullptr) == NATS_OK) {
            jsAccountInfo_Destroy(ai);
            ready = true;
          }
          if (js != nullptr) jsCtx_Destroy(js);
          natsConnection_Destroy(nc);
        }
        if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      REQUIRE_MESSAGE(ready, "NATS node " << i << " has no JetStream meta leader (see " << dir_
                                          << "/nats" << i << ".*.log)");
    }
    WaitPlacement();
  }

  // With every node running: until the meta leader can place three replicas (it knows every
  // peer), which it may not yet when each node first answers ("no suitable peers for
  // placement"), up to 30 s. Tried by creating and deleting a three-replica memory stream.
  void WaitPlacement() {
    for (int i = 0; i < kNodes; ++i) {
      if (pid_[i] <= 0) return;
    }
    const std::string name = "NATS_CLUSTER_PROCESS_PROBE";
    const std::string subject = "nats_cluster_process.probe";
    bool placed = false;
    for (int attempt = 0; attempt < 60 && !placed; ++attempt) {
      natsConnection* nc = nullptr;
      jsCtx* js = nullptr;
      if (natsConnection_ConnectTo(&nc, urls().c_str()) == NATS_OK &&
          natsConnection_JetStream(&js, nc, nullptr) == NATS_OK) {
        const char* subjects[] = {subject.c_str()};
        jsStreamConfig cfg;
        jsStreamConfig_Init(&cfg);
        cfg.Name = name.c_str();
        cfg.Subjects = subjects;
        cfg.SubjectsLen = 1;
        cfg.Storage = js_MemoryStorage;
        cfg.Replicas = kNodes;
        jsStreamInfo* si = nullptr;
        if (js_AddStream(&si, js, &cfg, nullptr, nullptr) == NATS_OK) {
          jsStreamInfo_Destroy(si);
          placed = js_DeleteStream(js, name.c_str(), nullptr, nullptr) == NATS_OK;
        }
      }
      if (js != nullptr) jsCtx_Destroy(js);
      if (nc != nullptr) natsConnection_Destroy(nc);
      if (!placed) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    REQUIRE_MESSAGE(placed,
                    "the NATS cluster cannot place three replicas (see " << dir_ << "/nats*.log)");
  }

  std::string dir_;
  std::array<uint16_t, kNodes> client_port_{}, route_port_{};
  std::array<pid_t, kNodes> pid_{-1, -1, -1};
  std::array<int, kNodes> starts_{};
};

}  // namespace relgraph::testing
