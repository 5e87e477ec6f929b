// The one narrow interface between the network layer and whatever executes commands.
//
// The server (net/server/server.h) owns sockets, framing, the handshake, limits and reply order; it
// knows nothing of graphs. A Service (the engine's command table, net/roles/service/command_service.h)
// knows nothing of sockets: it turns one request body into one reply body.
//
// Thread-safety: a Service must be safe to call from several threads at once (io threads and
// the server's background thread).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "storage/status.h"

namespace relgraph::net {

// How the server must run a command.
enum CommandFlags : uint32_t {
  kCommandReads = 0,
  kCommandWrites = 1u << 0,       // changes state; may return a durability ticket
  kCommandBackground = 1u << 1,   // slow: run off the io threads (replies still keep order)
  kCommandServerStats = 1u << 2,  // reads ServerStats (others get zeros: gathering costs time)
  // On success the reply comes with a Subscription: the connection then also carries the
  // frames it pushes (SUBSCRIBE's EVENTS, FETCH_SNAPSHOT's SNAPSHOT_DATA).
  kCommandSubscribes = 1u << 3,
  // A write that a pipelined run of such commands may execute as one batch (ExecuteBatch):
  // the server hands over every consecutive one it has read.
  kCommandBatches = 1u << 4,
};

struct CommandSpec {
  uint8_t opcode = 0;
  std::string_view name;  // as net::OpcodeName spells it
  uint32_t flags = 0;
};

// What the server itself knows, for the INFO reply.
struct ServerStats {
  uint64_t connections = 0;        // open now
  uint64_t connections_total = 0;  // accepted since start
  uint64_t requests_total = 0;     // frames executed since start
  uint64_t uptime_ms = 0;
  // Memory the open connections hold: their records and their read and write buffers.
  uint64_t connection_bytes = 0;
};

// Frames a request started and the server pushes after its reply, all with that request's
// id: a SUBSCRIBE's events, a FETCH_SNAPSHOT's file. The connection that owns it pulls the
// next body only when its socket has taken the previous ones (flow control), so a slow
// reader costs the writers nothing: it just reads later.
//
// Thread-safety: used by one thread at a time (its connection's io thread).
class Subscription {
 public:
  virtual ~Subscription() = default;
  // The opcode of the pushed frames (EVENTS, SNAPSHOT_DATA).
  virtual uint8_t push_opcode() const = 0;
  // Appends the next pushed body, at most max_body bytes, to *body when there is one.
  // Returns how much it consumed of its source (log records, file bytes): 0 means nothing
  // now (look again later), though a body may still have been appended (a heartbeat). An error ends
  // it; the server sends it as a frame of push_opcode() with that status.
  virtual Result<size_t> Next(size_t max_body, std::string* body) = 0;
  // True once everything was pushed (a finished transfer); the connection then drops it.
  virtual bool done() const { return false; }
};

struct ExecuteResult {
  Status status;        // not OK: the server replies with this error instead of the body
  uint64_t ticket = 0;  // non-zero: hold the reply until WaitDurable(ticket) succeeded
  std::unique_ptr<Subscription> subscription;  // kCommandSubscribes: set on success
};

// One request of a batch (Service::ExecuteBatch) and, once run, its outcome.
struct BatchItem {
  const CommandSpec* spec = nullptr;
  std::string_view body;
  Status status;         // set by ExecuteBatch: not OK, the server replies with this error
  size_t reply_end = 0;  // set by ExecuteBatch: the end of this reply's body in *replies,
                         // which begins where the previous item's ended (or at 0)
};

class Service {
 public:
  virtual ~Service() = default;

  // The command with this opcode, or nullptr when the service has none.
  virtual const CommandSpec* Find(uint8_t opcode) const = 0;

  // Runs one command: decodes `body`, executes, appends the reply body to *reply. On error the
  // server discards whatever was appended. REQUIRES: spec came from Find.
  virtual ExecuteResult Execute(const CommandSpec& spec, std::string_view body, std::string* reply,
                                const ServerStats& stats) = 0;

  // Runs consecutive pipelined requests whose commands have kCommandBatches as one unit. Each
  // item's status and reply body are exactly what Execute would have given, run alone in that
  // order; the bodies go one after another into *replies. Returns the ticket that covers every
  // item (0: none to wait for). This default runs Execute on each. REQUIRES: every spec came
  // from Find and has kCommandBatches.
  virtual uint64_t ExecuteBatch(std::span<BatchItem> items, std::string* replies) {
    uint64_t ticket = 0;
    for (BatchItem& item : items) {
      const size_t start = replies->size();
      ExecuteResult r = Execute(*item.spec, item.body, replies, ServerStats{});
      if (!r.status.ok()) replies->resize(start);
      item.status = std::move(r.status);
      item.reply_end = replies->size();
      if (r.ticket > ticket) ticket = r.ticket;
    }
    return ticket;
  }

  // Blocks until every ticket up to `ticket` is durable; an error means those writes may be
  // lost and must not be acknowledged. Called from the server's durability thread.
  virtual Status WaitDurable(uint64_t ticket) = 0;

  // Called once when the server has stopped serving, before it stops its durability thread:
  // a WaitDurable that may block for other reasons than the disk (replicas) must return now.
  virtual void OnStopping() {}

  // Called once when the server has stopped serving: flush what must be flushed.
  virtual Status OnShutdown() = 0;
};

}  // namespace relgraph::net
