#include "net/client/subscriber.h"

#include <algorithm>
#include <thread>

namespace relgraph::net {
namespace {

// Failures a new connection may cure; everything else is the server's final word.
bool Retryable(const Status& s) {
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

bool Stopped(const std::atomic<bool>* stop) {
  return stop != nullptr && stop->load(std::memory_order_relaxed);
}

}  // namespace

Status Subscribe(const SubscriberOptions& options, const std::function<bool(const WireEvent&)>& fn,
                 const std::atomic<bool>* stop, const SubscriberEvents& hooks) {
  SubscribeRequest request{options.from, options.lsn, options.kinds, options.name};
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
      if (!Retryable(client.status())) return client.status();
      last = client.status();
      ++failures;
      continue;
    }
    auto reply = (*client)->StartSubscription(request);
    if (!reply.ok()) {
      if (!Retryable(reply.status())) return reply.status();
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
    while (!Stopped(stop)) {
      auto events = (*client)->NextEvents(std::chrono::milliseconds(200));
      if (!events.ok()) {
        if (events.status().code() == Code::kTimeout) continue;
        if (!Retryable(events.status())) return events.status();
        last = events.status();
        ++failures;
        break;
      }
      for (const WireEvent& e : events->events) {
        request.lsn = e.lsn + 1;
        if (!fn(e)) return Status::OK();
      }
      request.lsn = std::max(request.lsn, events->next_lsn);
    }
  }
  return Status::OK();
}

}  // namespace relgraph::net
