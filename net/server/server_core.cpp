#include "net/server/server_core.h"

#include <algorithm>
#include <string>

#include "net/protocol/protocol.h"

namespace relgraph::net {

void DurabilityWaiter::Start(OnChange on_change) {
  on_change_ = std::move(on_change);
  thread_ = std::thread([this] { Loop(); });
}

void DurabilityWaiter::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DurabilityWaiter::Request(uint64_t ticket) {
  {
    std::lock_guard lock(mu_);
    if (ticket <= wanted_) return;
    wanted_ = ticket;
  }
  cv_.notify_one();
}

void DurabilityWaiter::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || wanted_ > std::max(durable(), failed_through()); });
    if (stop_) return;
    const uint64_t target = wanted_;
    lock.unlock();
    // Everything requested so far rides on one wait (group commit across connections).
    const Status s = service_->WaitDurable(target);
    if (s.ok()) {
      durable_.store(target, std::memory_order_release);
    } else {
      std::lock_guard failed(mu_);
      failed_ranges_.emplace_back(durable() + 1, target);
      if (failed_ranges_.size() > 64) failed_ranges_.erase(failed_ranges_.begin());
      failed_through_.store(target, std::memory_order_release);
    }
    if (on_change_) on_change_();
    lock.lock();
  }
}

bool DurabilityWaiter::Failed(uint64_t ticket) const {
  if (ticket > failed_through()) return false;
  std::lock_guard lock(mu_);
  for (const auto& [first, last] : failed_ranges_) {
    if (ticket >= first && ticket <= last) return true;
  }
  return false;
}

void BackgroundRunner::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void BackgroundRunner::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BackgroundRunner::Post(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void BackgroundRunner::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stop_ and drained
    auto task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    lock.lock();
  }
}

ServerStats ServerCore::Stats() const {
  ServerStats s;
  s.connections = connections.load(std::memory_order_relaxed);
  s.connections_total = connections_total.load(std::memory_order_relaxed);
  s.requests_total = requests_total.load(std::memory_order_relaxed);
  s.connection_bytes =
      static_cast<uint64_t>(std::max<int64_t>(0, connection_bytes.load(std::memory_order_relaxed)));
  s.uptime_ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          std::chrono::steady_clock::now() - started)
                                          .count());
  return s;
}

Status ServerCore::AnswerHello(const Frame& frame, std::string_view cert_name,
                               ClientIdentity* who, std::string* out) const {
  HelloRequest hello;
  if (Status s = WireDecode(frame.body, &hello, "hello request"); !s.ok()) return s;
  if (hello.version < kMinProtocolVersion || hello.version > kProtocolVersion) {
    return Status(Code::kUnsupported, "protocol version " + std::to_string(hello.version) +
                                          " is not supported (this server speaks " +
                                          std::to_string(kMinProtocolVersion) + " to " +
                                          std::to_string(kProtocolVersion) + ")");
  }
  auto identity = clients()->Authenticate(hello.token, cert_name);
  if (!identity.ok()) return identity.status();
  *who = std::move(*identity);
  const size_t start = BeginFrame(out, frame.request_id, frame.opcode, 0);
  // The reply has the fields of the client's version and no more: an older client's decoder
  // refuses trailing bytes.
  if (hello.version == 1) {
    WirePut(out, HelloReplyV1{1, options.max_frame, options.server_name});
  } else {
    WirePut(out, HelloReply{hello.version, options.max_frame, options.server_name,
                            options.server_version});
  }
  EndFrame(out, start);
  return Status::OK();
}

}  // namespace relgraph::net
