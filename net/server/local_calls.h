// LocalCalls: requests that reach the Service from inside the process, not from a socket (the
// HTTP JSON API, net/roles/http/json_api.h), run with what a connection gives them: the same
// Service, background commands on the background runner, replies to writes held until their
// ticket is durable (the server's DurabilityWaiter, so they share its group commit), and their
// counts in the server's command metrics. Internal to net/server; reached through
// Server::Call.
//
// Why this design: a second front that called the Service itself would have to copy the
// durability rule (never acknowledge a write whose WAL sync failed) and would be missing from
// the metrics; a loopback socket to the binary port would cost a round trip per request.
// SLOWLOG is answered here, from the server's slow log, as a connection answers it.
// Connection-bound commands are refused: HELLO (HTTP authenticates per request), and the
// commands that start a stream of pushed frames (SUBSCRIBE, FETCH_SNAPSHOT, REPLICATE).
//
// Thread-safety: Call, OnDurabilityChange and FailPending from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "net/server/command_metrics.h"
#include "net/server/server_core.h"
#include "storage/status.h"

namespace relgraph::net {

// The reply body of a call, or why there is none. Called exactly once, on a server thread
// (the caller's, the background runner's or the durability waiter's): keep it short.
using CallDone = std::function<void(Status status, std::string reply_body)>;

class LocalCalls {
 public:
  explicit LocalCalls(ServerCore& core) : core_(core) {}

  // Runs request `opcode` with `body` (its wire encoding, docs/protocol.md); `done` gets the
  // reply body, or the command's error, or kUnavailable when the outcome of a write is unknown
  // (its WAL sync failed, or the server stopped before it was durable).
  void Call(uint8_t opcode, std::string body, CallDone done);
  // The durable ticket moved or a wait failed: answers the calls that were waiting for it.
  void OnDurabilityChange();
  // Answers every waiting call with `why` (the server stops).
  void FailPending(const Status& why);
  // Adds what the calls counted to *m.
  void AddTo(CommandMetrics* m) const;

 private:
  struct Waiting {
    uint64_t ticket;
    std::string reply;
    CallDone done;
  };
  void Finish(ExecuteResult r, std::string reply, CallDone done);
  // Counts the call in the metrics and, when slow, in the slow log (client "http").
  void Record(uint8_t opcode, std::string_view body, uint64_t ns, Code code);

  ServerCore& core_;
  mutable std::mutex mu_;
  std::vector<Waiting> waiting_;  // guarded by mu_
  bool stopped_ = false;          // guarded by mu_
  mutable std::mutex record_mu_;
  CommandRecorder recorder_;  // guarded by record_mu_ (callers are several threads)
};

}  // namespace relgraph::net
