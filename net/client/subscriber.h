// Subscribe: follows relgraphd's change stream with automatic resume, the C++ client's way to
// consume it (docs/change-stream.md).
//
// Why this design: a consumer wants every event once, in order, across dropped connections
// and server restarts, without writing the bookkeeping itself. Subscribe keeps the LSN the
// stream goes on from (each EVENTS frame says it, so events of kinds it did not ask for are
// not read again either) and, when the connection fails, reconnects with exponential backoff
// and subscribes again from that LSN. Errors a reconnect cannot fix (lsn_expired, a bad
// argument, a refused token) end it and are returned.
//
// Thread-safety: each call runs on the caller's thread with its own connection; `stop` may be
// set from another thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>

#include "net/client/client.h"

namespace relgraph::net {

struct SubscriberOptions {
  ClientOptions client;
  SubscribeFrom from = SubscribeFrom::kNow;
  uint64_t lsn = 0;    // with SubscribeFrom::kLsn
  uint32_t kinds = 0;  // bit k: event kind k; 0: every kind
  std::string name;    // a named cursor, or empty
  // With a name: ACK the last event handled (fn returned true) at most this often, and once
  // more when Subscribe returns, so a later run resumes after it. 0: never ACK.
  std::chrono::milliseconds ack_interval{0};
  std::chrono::milliseconds retry_min{100};  // first wait before reconnecting, doubled up to
  std::chrono::milliseconds retry_max{5000};
  int max_retries = -1;  // consecutive failed reconnects before giving up; -1: never
};

// What Subscribe reports besides events.
struct SubscriberEvents {
  // Called after each successful SUBSCRIBE (the first and every resume).
  std::function<void(const SubscribeReply&)> on_subscribed;
  // Called when the connection failed and a reconnect is about to be tried.
  std::function<void(const Status& why, std::chrono::milliseconds wait)> on_retry;
};

// True for failures a new connection may cure (I/O, timeouts, an unavailable or full
// server); every other status is the server's final word.
bool IsRetryable(const Status& s);

// Delivers every event of the chosen kinds, in LSN order, each once, to `fn` until fn returns
// false (it handled that event and wants no more) or *stop becomes true (OK), or the stream ends
// with an error a reconnect cannot fix (returned). A caller that stores the LSN of each event it
// has handled can pass the next one as SubscribeFrom::kLsn to resume in a later run, or name a
// cursor and let Subscribe ACK it (ack_interval). A named cursor that does not exist yet is created
// by the first ACK; to start one, subscribe with kLsn or kNow and the name (kCursor needs an
// existing cursor).
Status Subscribe(const SubscriberOptions& options, const std::function<bool(const WireEvent&)>& fn,
                 const std::atomic<bool>* stop = nullptr, const SubscriberEvents& hooks = {});

}  // namespace relgraph::net
