#include "engine/background_worker.h"

#include <chrono>

namespace relgraph {

void BackgroundWorker::Start(std::function<bool()> run_batch, uint32_t gather_us) {
  run_batch_ = std::move(run_batch);
  gather_us_ = gather_us;
  thread_ = std::thread([this] { Loop(); });
}

void BackgroundWorker::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BackgroundWorker::Wake() {
  if (signal_.exchange(true)) return;  // signalled already, and not yet drained
  // Taking the mutex orders the flag before the waiter's predicate check: no lost wake-up.
  { std::lock_guard lock(mu_); }
  wake_.notify_one();
}

void BackgroundWorker::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || signal_.load(); });
    if (stop_) return;
    if (gather_us_ > 0) {  // let the rest of a burst queue up
      wake_.wait_for(lock, std::chrono::microseconds(gather_us_), [&] { return stop_; });
      if (stop_) return;
    }
    signal_ = false;
    lock.unlock();
    while (run_batch_()) {
    }
    lock.lock();
  }
}

}  // namespace relgraph
