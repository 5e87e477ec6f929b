// One io thread: its io_context, the connections it owns and their timeout sweep. Internal to
// net/; the Server spreads accepted connections over its workers round-robin.
//
// Thread-safety: Post() and BeginShutdown() are thread-safe; everything else runs on the
// worker's own thread.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <thread>
#include <unordered_map>
#include <vector>
#include "net/server/asio.h"

#include "net/server/connection.h"
#include "net/server/server_core.h"

namespace relgraph::net {

class IoWorker {
 public:
  explicit IoWorker(ServerCore& core);
  ~IoWorker();

  boost::asio::io_context& io() { return io_; }
  void StartThread();
  void Join();

  template <typename Fn>
  void Post(Fn&& fn) {
    boost::asio::post(io_, std::forward<Fn>(fn));
  }

  // Adopts a connection accepted onto this worker's io_context (from any thread).
  void Adopt(std::shared_ptr<Connection> connection, std::optional<Status> reject);
  void Remove(Connection* connection);  // on the worker thread, when a connection closes
  void BeginShutdown();                 // from any thread
  void NotifyDurability();              // from any thread
  // What a connection reads into, on this worker's thread only: one buffer for all of them,
  // so an idle connection holds no read buffer (connection.h).
  std::span<char> read_scratch() { return {read_scratch_.get(), kReadScratchBytes}; }
  static constexpr size_t kReadScratchBytes = 64 * 1024;
  // Likewise, what a connection gathers a pipelined run of writes into.
  WriteBatchScratch& write_batch_scratch() { return write_batch_scratch_; }
  // What this thread counts of the commands it runs (written here only; read from any thread).
  CommandRecorder& recorder() { return recorder_; }
  const CommandRecorder& recorder() const { return recorder_; }

 private:
  void ScheduleSweep();
  void MaybeStop();
  // A copy of the connection list: iterate it, since a connection may close (and leave the
  // map) in the call made on it.
  std::vector<std::shared_ptr<Connection>> Connections() const;

  ServerCore& core_;
  std::unique_ptr<char[]> read_scratch_ = std::make_unique<char[]>(kReadScratchBytes);
  WriteBatchScratch write_batch_scratch_;
  CommandRecorder recorder_;
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guard_;
  boost::asio::steady_timer sweep_;
  std::unordered_map<Connection*, std::shared_ptr<Connection>> connections_;
  bool shutting_down_ = false;
  std::chrono::steady_clock::time_point shutdown_deadline_;
  std::thread thread_;
};

}  // namespace relgraph::net
