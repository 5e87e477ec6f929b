// Bridge: relgraphd's change stream into NATS JetStream, each event exactly once.
//
// Why this design: JetStream drops a message whose id it has seen (within the stream's
// duplicate window), and the bridge uses the event's LSN as that id; on top of that, at start
// it reads the LSN of the last message the stream holds and resumes after it, so a bridge
// killed at any point neither loses nor repeats an event, however long it was down. Its
// position is also kept as a named cursor in relgraph (ACKed only after JetStream has
// acknowledged every message up to it), which holds relgraph's WAL for it while it is down.
// Publishing is asynchronous and waited for once per EVENTS frame, so a round trip to
// JetStream is paid per batch, not per event.
//
// Thread-safety: one Bridge per thread; Run blocks until stopped or failed.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "net/client/client.h"
#include "storage/status.h"

namespace relgraph {

struct BridgeOptions {
  net::ClientOptions relgraph;  // the relgraphd to read
  std::string nats_url = "nats://127.0.0.1:4222";
  std::string stream = "RELGRAPH";          // the JetStream stream (created when absent)
  std::string subject_prefix = "relgraph";  // subjects: PREFIX.follow, PREFIX.publish, ...
  std::string cursor = "relgraph-bridge";   // its named cursor in relgraph
  uint32_t kinds = 0;                       // event kinds carried; 0: all
  // Where a bridge with no cursor and an empty stream starts: an LSN, or 0 for "now".
  uint64_t from_lsn = 0;
  std::chrono::milliseconds retry{500};  // wait before reconnecting after a failure
  // Stop (OK) once every event up to this LSN is published, publishing none after it and
  // leaving the cursor at it; 0: run until stopped. For a one-off copy of the history (and
  // the benchmark).
  uint64_t until_lsn = 0;
};

struct BridgeStats {
  uint64_t published = 0;    // messages JetStream acknowledged
  uint64_t last_lsn = 0;     // the LSN of the last of them
  uint64_t carried_lsn = 0;  // every event up to here is in JetStream (other kinds skipped)
};

class Bridge {
 public:
  explicit Bridge(BridgeOptions options) : options_(std::move(options)) {}
  // Runs until *stop (OK) or an error no reconnect cures (a bad option, an expired cursor).
  // Connection failures on either side are retried every `retry`.
  Status Run(const std::atomic<bool>& stop);
  BridgeStats stats() const { return stats_; }

 private:
  BridgeOptions options_;
  BridgeStats stats_;
};

}  // namespace relgraph
