#include "net/client/subscriber.h"

#include <algorithm>
#include <thread>

namespace relgraph::net {

bool IsRetryable(const Status& s) {
  switch (s.code()) {
    case Code::kIOError:
    case Code::kTimeout:
    case Code::kUnavailable:
    case Code::kResourceExhausted:  // too many connections, or idle: try again later
      return true;
    default:
      return false;
  }
}

namespace {

bool Stopped(const std::atomic<bool>* stop) {
  return stop != nullptr && stop->load(std::memory_order_relaxed);
}

}  // namespace

Status Subscribe(const SubscriberOptions& options, const std::function<bool(const WireEvent&)>& fn,
                 const std::atomic<bool>* stop, const SubscriberEvents& hooks) {
  SubscribeRequest request{options.from, options.lsn, options.kinds,
                           options.from == SubscribeFrom::kCursor ? options.name : ""};
  const bool acking = !options.name.empty() && options.ack_interval.count() > 0;
  uint64_t handled = 0, acked = 0;  // the last event fn took, the last LSN ACKed
  auto last_ack = std::chrono::steady_clock::now();
  // ACKs go on the subscribed connection (replies and EVENTS interleave; the client sorts
  // them). A failed ACK is tried again with the next one.
  auto ack = [&](Client& c, bool force) {
    if (!acking || handled == acked) return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_ack < options.ack_interval) return;
    if (c.Ack(options.name, handled).ok()) acked = handled;
    last_ack = now;
  };
  auto wait = options.retry_min;
  int failures = 0;
  Status last;
  while (!Stopped(stop)) {
    if (failures > 0) {
      if (options.max_retries >= 0 && failures > options.max_retries) return last;
      if (hooks.on_retry) hooks.on_retry(last, wait);
      // Sleep in short steps so that `stop` is honoured promptly.
      const auto until = std::chrono::steady_clock::now() + wait;
      while (!Stopped(stop) && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(
            std::min<std::chrono::milliseconds>(wait, std::chrono::milliseconds(20)));
      }
      wait = std::min(wait * 2, options.retry_max);
      if (Stopped(stop)) break;
    }
    auto client = Client::Connect(options.client);
    if (!client.ok()) {
      if (!IsRetryable(client.status())) return client.status();
      last = client.status();
      ++failures;
      continue;
    }
    auto reply = (*client)->StartSubscription(request);
    if (!reply.ok()) {
      if (!IsRetryable(reply.status())) return reply.status();
      last = reply.status();
      ++failures;
      continue;
    }
    failures = 0;
    wait = options.retry_min;
    if (hooks.on_subscribed) hooks.on_subscribed(*reply);
    // From here on a resume starts where this stream stands, whatever the first start was.
    request.from = SubscribeFrom::kLsn;
    request.lsn = reply->first_lsn;
    request.name.clear();
    bool broken = false;
    while (!Stopped(stop) && !broken) {
      auto events = (*client)->NextEvents(std::chrono::milliseconds(200));
      if (!events.ok()) {
        if (events.status().code() == Code::kTimeout) {
          ack(**client, false);
          continue;
        }
        if (!IsRetryable(events.status())) return events.status();
        last = events.status();
        ++failures;
        broken = true;
        break;
      }
      for (const WireEvent& e : events->events) {
        request.lsn = e.lsn + 1;
        const bool more = fn(e);
        handled = e.lsn;
        if (!more) {
          ack(**client, true);
          return Status::OK();
        }
      }
      request.lsn = std::max(request.lsn, events->next_lsn);
      ack(**client, false);
    }
    if (!broken) ack(**client, true);  // stopped: leave the cursor where we are
  }
  return Status::OK();
}

}  // namespace relgraph::net
