// BackgroundWorker: a thread that runs a Db's background work in bounded batches: the feed's
// fan-out, and the id index's growth. Those who queue work Wake it (lock-free after the first
// wake: only the first wake after it sleeps notifies); once woken it waits gather_us so a
// burst of wakes costs one wake-up (a syscall and two context switches) instead of one each,
// then calls run_batch until it returns false (no work left).
//
// Thread-safety: Wake is thread-safe and cheap; Start and Stop are called by the owner once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace relgraph {

class BackgroundWorker {
 public:
  BackgroundWorker() = default;
  ~BackgroundWorker() { Stop(); }
  BackgroundWorker(const BackgroundWorker&) = delete;
  BackgroundWorker& operator=(const BackgroundWorker&) = delete;

  // run_batch runs one bounded batch of the work and says whether any remains.
  void Start(std::function<bool()> run_batch, uint32_t gather_us);
  // Joins the thread (a batch running finishes first). Idempotent.
  void Stop();
  void Wake();

 private:
  void Loop();

  std::function<bool()> run_batch_;
  uint32_t gather_us_ = 0;
  std::mutex mu_;
  std::condition_variable wake_;
  // Set by Wake; cleared by the thread before each drain.
  std::atomic<bool> signal_{false};
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace relgraph
