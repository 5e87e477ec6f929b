// GroupClient: a client of a replication group (docs/replication.md, "Clients"): it sends
// writes to the group's primary, finds it again after a failover, and retries a request whose
// outcome became unknown only when doing it twice is harmless (RetrySafe, command_table.h).
//
// Why this design: the group's members name the primary themselves (a write sent to a
// replica is refused with read_only carrying the primary's address), so the client needs no
// NATS library: it keeps one connection, to the primary it last found, and on read_only goes
// where it is sent; on a lost connection it asks each known member in turn, with backoff, until
// `failover_timeout`. While a group elects, members answer read_only with no address: the
// client waits and asks again. A request that was sent on a connection that then failed, or that
// a primary answered with unavailable (it stepped down before acknowledging), may or may not
// have been carried out: it is sent again when RetrySafe, else kUnavailable says its outcome is
// unknown. With `replica_reads`, requests that only read (ReadsOnly) go to a replica.
//
// Thread-safety: one GroupClient per thread, like Client.
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "net/client/client.h"
#include "net/client/typed_calls.h"
#include "net/protocol/command_table.h"

namespace relgraph::net {

struct GroupClientOptions {
  std::vector<std::string> nodes;  // "host:port" of members (any of them; all is best)
  ClientOptions connection;        // token and timeouts (host and port are the nodes')
  // How long one call keeps looking for a primary before it gives up (kUnavailable).
  std::chrono::milliseconds failover_timeout{10000};
  bool replica_reads = false;  // send requests that only read to a replica
  // With replica_reads: every read sees this client's own writes (docs/replication.md,
  // "Reading your own writes"). After each write the client asks the primary its POSITION (one
  // round trip more), which raises read_floor(); before a read it asks the replica, and reads
  // there once the replica applied that far, waiting up to `read_wait`, else from the primary.
  bool read_your_writes = false;
  std::chrono::milliseconds read_wait{200};
};

class GroupClient : public TypedCalls<GroupClient> {
 public:
  // Connects to the first member that answers. kInvalidArgument for no nodes or a bad one.
  static Result<std::unique_ptr<GroupClient>> Connect(GroupClientOptions options);

  template <typename Request>
  Result<typename Request::Reply> Call(const Request& request) {
    constexpr Opcode op = Request::kOpcode;
    const bool to_replica = options_.replica_reads && ReadsOnly(op);
    const auto deadline = std::chrono::steady_clock::now() + options_.failover_timeout;
    Status last;
    named_ = unnamed_ = 0;
    for (int attempt = 0;; ++attempt) {
      if (attempt > 0 && !Backoff(deadline)) return Unknown(last, op, false);
      Client* c = Link(to_replica, &last);
      if (c == nullptr) continue;
      // A replica behind what this client must see: the primary answers instead.
      if (to_replica && (read_floor_ > 0 || floor_unknown_) && !ReplicaHasFloor(c)) {
        c = Link(false, &last);
        if (c == nullptr) continue;
      }
      auto r = c->Call(request);
      if (r.ok()) {
        if (!ReadsOnly(op) && options_.read_your_writes) NoteWrite(c);
        return r;
      }
      last = r.status();
      if (!c->healthy()) {  // sent, and the connection failed: carried out or not
        Drop(to_replica);
        if (!RetrySafe(op)) return Unknown(last, op, true);
        continue;
      }
      if (r.status().code() == Code::kReadOnly && !to_replica) {
        Redirect(r.status().message());  // the primary it names, or none during an election
        continue;
      }
      if (r.status().code() == Code::kUnavailable && !to_replica &&
          r.status().message().find("outcome is unknown") != std::string::npos) {
        Drop(false);  // it stepped down: find the new primary
        if (!RetrySafe(op)) return r;
        continue;
      }
      return r;  // the server's answer
    }
  }

  // The LSN every read must see at least: raised by this client's writes (read_your_writes),
  // or set by ReadAtLeast (an LSN carried over from another client, a user's session). 0: none.
  uint64_t read_floor() const { return read_floor_; }
  void ReadAtLeast(uint64_t lsn) { read_floor_ = std::max(read_floor_, lsn); }

  // The member this client last found to be the primary ("" before it found one).
  const std::string& primary() const { return primary_address_; }
  // How many times a call was sent again or went elsewhere (for tests and the bench).
  uint64_t retries() const { return retries_; }

 private:
  explicit GroupClient(GroupClientOptions options) : options_(std::move(options)) {}
  // The connection for this kind of request, connecting when needed; nullptr with *why set
  // when no member answered this time.
  Client* Link(bool to_replica, Status* why);
  void Drop(bool to_replica);
  void Redirect(const std::string& address);
  // Sleeps before the next attempt of a call; false when that would pass the deadline.
  bool Backoff(std::chrono::steady_clock::time_point deadline);
  Status Unknown(const Status& last, Opcode op, bool sent) const;
  // After a write acknowledged on `primary`: read_floor_ rises to the primary's applied LSN,
  // which covers the write (POSITION runs after it on the same connection). When POSITION
  // fails, reads go to the primary until a later write's succeeds.
  void NoteWrite(Client* primary);
  // Whether `replica` applied read_floor_, asking its POSITION until read_wait passes.
  bool ReplicaHasFloor(Client* replica);

  GroupClientOptions options_;
  std::unique_ptr<Client> primary_;
  std::unique_ptr<Client> replica_;
  std::string primary_address_;
  size_t next_node_ = 0;  // the member asked next when the primary is unknown
  uint64_t retries_ = 0;
  int named_ = 0, unnamed_ = 0;  // this call's attempts sent to a named primary, and not
  uint64_t read_floor_ = 0;
  bool floor_unknown_ = false;  // a write's POSITION failed: read from the primary
};

}  // namespace relgraph::net
