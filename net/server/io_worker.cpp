#include "net/server/io_worker.h"

#include <algorithm>

namespace relgraph::net {

IoWorker::IoWorker(ServerCore& core) : core_(core), sweep_(io_) {
  guard_.emplace(io_.get_executor());
}

IoWorker::~IoWorker() {
  Join();
}

void IoWorker::StartThread() {
  ScheduleSweep();
  thread_ = std::thread([this] { io_.run(); });
}

void IoWorker::Join() {
  if (thread_.joinable()) thread_.join();
}

void IoWorker::Adopt(std::shared_ptr<Connection> connection, std::optional<Status> reject) {
  Post([this, connection = std::move(connection), reject = std::move(reject)] {
    connections_.emplace(connection.get(), connection);
    if (reject) {
      connection->StartRejected(*reject);
    } else if (shutting_down_) {
      connection->BeginShutdown();
    } else {
      connection->Start();
    }
  });
}

void IoWorker::Remove(Connection* connection) {
  // Keep the object alive until the handler that called us has returned.
  auto it = connections_.find(connection);
  if (it == connections_.end()) return;
  Post([keep = std::move(it->second)] {});
  connections_.erase(it);
  core_.connections.fetch_sub(1, std::memory_order_relaxed);
  MaybeStop();
}

void IoWorker::BeginShutdown() {
  Post([this] {
    if (shutting_down_) return;
    shutting_down_ = true;
    shutdown_deadline_ = std::chrono::steady_clock::now() + core_.options.shutdown_grace;
    for (auto& c : Connections()) c->BeginShutdown();
    MaybeStop();
  });
}

void IoWorker::NotifyDurability() {
  Post([this] {
    for (auto& c : Connections()) c->OnDurabilityChange();
  });
}

std::vector<std::shared_ptr<Connection>> IoWorker::Connections() const {
  std::vector<std::shared_ptr<Connection>> all;
  all.reserve(connections_.size());
  for (const auto& [ptr, c] : connections_) all.push_back(c);
  return all;
}

void IoWorker::MaybeStop() {
  if (!shutting_down_ || !connections_.empty()) return;
  sweep_.cancel();
  guard_.reset();  // run() returns once the last handlers are done
}

void IoWorker::ScheduleSweep() {
  // Sweep often enough that the shortest timeout is honoured within a quarter of itself.
  const auto shortest = std::min(
      {core_.idle_timeout(), core_.send_timeout(), std::chrono::milliseconds(4000)});
  const auto period = std::max(std::chrono::milliseconds(10), shortest / 4);
  sweep_.expires_after(period);
  sweep_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    const auto now = std::chrono::steady_clock::now();
    const auto all = Connections();
    const bool cut = shutting_down_ && now > shutdown_deadline_;
    for (auto& c : all) {
      if (cut) {
        c->Abort();
      } else {
        c->Sweep(now);
      }
    }
    if (shutting_down_ && connections_.empty()) return MaybeStop();
    ScheduleSweep();
  });
}

}  // namespace relgraph::net
