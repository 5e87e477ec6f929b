// Server: the Asio TCP front of a Service (docs/protocol.md; threads in docs/design.md).
//
// Why this design: `io_threads` workers each run their own io_context and own their connections
// outright (no strands, no locks on the request path); the acceptor round-robins new sockets
// over them. Commands run inline on the io thread (they take microseconds); the two things that
// may take long run elsewhere: waiting for an fsync (DurabilityWaiter, one thread, group commit
// for every connection) and background commands such as snapshot (BackgroundRunner).
// Shutdown closes the acceptor, lets every connection write the replies it owes, then stops.
//
// Thread-safety: Start, Wait and the destructor from one thread; Shutdown and port from any.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "net/auth/client_registry.h"
#include "net/server/asio.h"
#include "net/server/command_metrics.h"
#include "net/server/local_calls.h"
#include "net/server/server_core.h"
#include "net/server/server_options.h"
#include "net/service.h"
#include "storage/status.h"

namespace relgraph::net {

class IoWorker;

class Server {
 public:
  // `service` is not owned and must outlive the Server.
  Server(const ServerOptions& options, Service* service);
  ~Server();  // Shutdown() and Wait()

  // Binds, listens and starts the threads. Errors: kInvalidArgument (bad option), kIOError
  // (the address cannot be bound: the message names it and why).
  Status Start();
  uint16_t port() const { return port_.load(); }  // the bound port, after Start
  // Starts a graceful shutdown; returns at once. Idempotent.
  void Shutdown();
  // Blocks until the server has stopped, then calls Service::OnShutdown and returns its status.
  Status Wait();
  ServerStats stats() const { return core_.Stats(); }
  // What the server counted of the commands it ran (command_metrics.h), from every thread
  // that runs them; from any thread once Start succeeded.
  CommandMetrics command_metrics() const;
  // The settings that change live (relgraphd's SIGHUP): the connection limit (open ones past
  // a lower limit stay), the idle and send timeouts (each connection's next sweep uses them),
  // and the slow-command log's threshold and length. From any thread.
  void SetLimits(uint32_t max_connections, std::chrono::milliseconds idle_timeout,
                 std::chrono::milliseconds send_timeout);
  void SetSlowLog(int64_t threshold_us, uint32_t max_len);

  // Runs one request from inside the process, as a connection would run it (local_calls.h):
  // `done` gets the reply body or the error, once, on a server thread. Before Start and once
  // the server stops: kUnavailable. Thread-safe.
  // `who` must hold the permission the command needs (else kPermissionDenied).
  void Call(const ClientIdentity& who, uint8_t opcode, std::string body, CallDone done);
  // The client `token` names, or with no token the client whose verified certificate is named
  // `cert_name` (both empty: the anonymous client, when no client is defined);
  // kUnauthenticated else. The time taken does not depend on the token. Thread-safe.
  Result<ClientIdentity> Authenticate(std::string_view token,
                                     std::string_view cert_name = "") const;
  // Swaps in new TLS files and a new clients file (relgraphd's SIGHUP): connections opened
  // from now on use the new certificate; every connection's next command is checked against
  // the new clients. On any error nothing changes. Also run by Start. Thread-safe.
  Status ReloadSecurity(const TlsServerOptions& tls, const std::string& clients_file,
                        const std::string& auth_token);

 private:
  void DoAccept();

  ServerCore core_;
  LocalCalls local_{core_};
  std::vector<std::unique_ptr<IoWorker>> workers_;
  std::optional<boost::asio::ip::tcp::acceptor> acceptor_;
  std::optional<boost::asio::signal_set> signals_;
  size_t next_worker_ = 0;
  std::atomic<uint16_t> port_{0};
  std::atomic<bool> shutdown_started_{false};
  bool started_ = false;
  bool waited_ = false;
  Status wait_status_;
};

}  // namespace relgraph::net
