#include "net/server/slow_log.h"

#include <utility>

namespace relgraph::net {

SlowLog::SlowLog(int64_t threshold_us, uint32_t max_len, OnEntry on_entry)
    : threshold_us_(threshold_us), on_entry_(std::move(on_entry)), max_len_(max_len) {}

void SlowLog::Add(SlowlogEntry entry) {
  {
    std::lock_guard lock(mu_);
    entry.id = next_id_++;
    if (max_len_ > 0) {
      if (entries_.size() == max_len_) entries_.pop_front();
      entries_.push_back(entry);
    }
  }
  total_.fetch_add(1, std::memory_order_relaxed);
  if (on_entry_) on_entry_(entry);
}

SlowlogReply SlowLog::Read(uint16_t count, bool reset) {
  SlowlogReply r;
  std::lock_guard lock(mu_);
  r.threshold_us = threshold_us_.load(std::memory_order_relaxed);
  r.max_len = max_len_;
  const size_t n = count == 0 ? entries_.size() : std::min<size_t>(count, entries_.size());
  r.entries.assign(entries_.rbegin(), entries_.rbegin() + static_cast<std::ptrdiff_t>(n));
  if (reset) entries_.clear();
  return r;
}

void SlowLog::Configure(int64_t threshold_us, uint32_t max_len) {
  std::lock_guard lock(mu_);
  threshold_us_.store(threshold_us, std::memory_order_relaxed);
  max_len_ = max_len;
  while (entries_.size() > max_len_) entries_.pop_front();
}

uint32_t SlowLog::max_len() const {
  std::lock_guard lock(mu_);
  return max_len_;
}

}  // namespace relgraph::net
