#include "net/server/server.h"

#include <algorithm>
#include <csignal>

#include "net/protocol/protocol.h"
#include "net/server/io_worker.h"

namespace relgraph::net {

namespace asio = boost::asio;
using asio::ip::tcp;

Server::Server(const ServerOptions& options, Service* service) : core_(options, service) {}

Server::~Server() {
  Shutdown();
  Wait().IgnoreError();
}

Status Server::Start() {
  const ServerOptions& o = core_.options;
  if (o.io_threads < 1 || o.io_threads > 64) {
    return Status::InvalidArgument("io_threads must be 1..64, got " + std::to_string(o.io_threads));
  }
  if (o.max_frame < kMinMaxFrame) {
    return Status::InvalidArgument("max_frame must be at least 4096 bytes");
  }
  if (o.max_connections < 1) return Status::InvalidArgument("max_connections must be >= 1");
  RELGRAPH_RETURN_IF_ERROR(ReloadSecurity(o.tls, o.clients_file, o.auth_token));
  for (uint32_t i = 0; i < o.io_threads; ++i) {
    workers_.push_back(std::make_unique<IoWorker>(core_));
  }
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(o.host, ec);
  if (ec) {
    return Status::InvalidArgument("listen address '" + o.host + "' is not an IP address");
  }
  const tcp::endpoint endpoint(address, o.port);
  const std::string where = o.host + ":" + std::to_string(o.port);
  acceptor_.emplace(workers_[0]->io());
  acceptor_->open(endpoint.protocol(), ec);
  if (!ec) acceptor_->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_->bind(endpoint, ec);
  if (!ec) acceptor_->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    acceptor_.reset();
    workers_.clear();
    return Status::IOError("cannot listen on " + where + ": " + ec.message());
  }
  port_ = acceptor_->local_endpoint().port();
  if (o.handle_signals) {
    signals_.emplace(workers_[0]->io(), SIGINT, SIGTERM);
    signals_->async_wait([this](const boost::system::error_code& e, int) {
      if (!e) Shutdown();
    });
  }
  core_.durability.Start([this] {
    for (auto& w : workers_) w->NotifyDurability();
    local_.OnDurabilityChange();
  });
  core_.background.Start();
  DoAccept();
  for (auto& w : workers_) w->StartThread();
  started_ = true;
  return Status::OK();
}

void Server::DoAccept() {
  IoWorker& target = *workers_[next_worker_];
  next_worker_ = (next_worker_ + 1) % workers_.size();
  acceptor_->async_accept(
      target.io(), [this, &target](const boost::system::error_code& ec, tcp::socket socket) {
        if (ec == asio::error::operation_aborted || !acceptor_->is_open()) return;
        if (!ec) {
          const uint64_t open = core_.connections.fetch_add(1, std::memory_order_relaxed);
          core_.connections_total.fetch_add(1, std::memory_order_relaxed);
          std::optional<Status> reject;
          const uint32_t limit = core_.max_connections.load(std::memory_order_relaxed);
          if (open >= limit) {
            reject = Status(Code::kResourceExhausted,
                            "too many connections (the limit is " +
                                std::to_string(limit) + ")");
          }
          target.Adopt(std::make_shared<Connection>(core_, target, std::move(socket)), reject);
        }
        // Accept errors (for example EMFILE) are transient: keep accepting.
        DoAccept();
      });
}

CommandMetrics Server::command_metrics() const {
  CommandMetrics m;
  if (!started_) return m;
  for (const auto& w : workers_) w->recorder().AddTo(&m);
  core_.background_recorder.AddTo(&m);
  local_.AddTo(&m);
  m.slow_commands = core_.slow_log.total();
  return m;
}

void Server::Call(const ClientIdentity& who, uint8_t opcode, std::string body, CallDone done) {
  if (!started_ || shutdown_started_.load()) {
    return done(Status(Code::kUnavailable, started_ ? "the server is shutting down"
                                                    : "the server is not serving yet"),
                {});
  }
  if (const CommandInfo* info = FindCommand(opcode); info != nullptr) {
    const Permissions need = RequiredPermissions(info->opcode);
    if (need != kPermNone && (who.permissions & need) == 0) {
      Status denied = PermissionDenied(info->opcode, who.name, who.permissions);
      core_.Log(denied.message() + " (over HTTP)");
      return done(std::move(denied), {});
    }
  }
  local_.Call(opcode, std::move(body), std::move(done));
}

Result<ClientIdentity> Server::Authenticate(std::string_view token,
                                           std::string_view cert_name) const {
  return core_.clients()->Authenticate(token, cert_name);
}

Status Server::ReloadSecurity(const TlsServerOptions& tls, const std::string& clients_file,
                              const std::string& auth_token) {
  std::shared_ptr<const TlsContext> context;
  if (tls.enabled()) {
    auto built = TlsContext::ForServer(tls);
    if (!built.ok()) return built.status();
    context = std::move(*built);
  } else if (tls.key_file.size() + tls.ca_file.size() > 0) {
    return Status::InvalidArgument("a TLS key or CA file without a certificate file");
  }
  auto registry = ClientRegistry::Load(clients_file, auth_token);
  if (!registry.ok()) return registry.status();
  {
    std::lock_guard lock(core_.security_mu);
    core_.tls_context = std::move(context);
    core_.client_registry = std::make_shared<const ClientRegistry>(std::move(*registry));
  }
  core_.clients_generation.fetch_add(1, std::memory_order_release);
  return Status::OK();
}

void Server::SetLimits(uint32_t max_connections, std::chrono::milliseconds idle_timeout,
                       std::chrono::milliseconds send_timeout) {
  core_.max_connections.store(std::max<uint32_t>(1, max_connections), std::memory_order_relaxed);
  core_.idle_timeout_ms.store(idle_timeout.count(), std::memory_order_relaxed);
  core_.send_timeout_ms.store(send_timeout.count(), std::memory_order_relaxed);
}

void Server::SetSlowLog(int64_t threshold_us, uint32_t max_len) {
  core_.slow_log.Configure(threshold_us, max_len);
}

void Server::Shutdown() {
  if (!started_ || shutdown_started_.exchange(true)) return;
  asio::post(workers_[0]->io(), [this] {
    boost::system::error_code ignored;
    if (acceptor_) acceptor_->close(ignored);
    if (signals_) signals_->cancel(ignored);
  });
  for (auto& w : workers_) w->BeginShutdown();
}

Status Server::Wait() {
  if (!started_ || waited_) return wait_status_;
  for (auto& w : workers_) w->Join();
  core_.background.Stop();
  core_.service->OnStopping();
  core_.durability.Stop();
  local_.FailPending(Status(Code::kUnavailable,
                            "the outcome is unknown: the server stopped before the write was "
                            "durable"));
  waited_ = true;
  wait_status_ = core_.service->OnShutdown();
  return wait_status_;
}

}  // namespace relgraph::net
