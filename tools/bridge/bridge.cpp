#include "tools/bridge/bridge.h"

#include <nats/nats.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>

#include "net/client/event_format.h"
#include "net/client/subscriber.h"
#include "net/cluster/nats_link.h"

namespace relgraph {
namespace {

// A connection to NATS and its JetStream context, released together.
struct JetStream {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  std::atomic<uint64_t> async_errors{0};  // publishes JetStream refused or never answered
  ~JetStream() {
    if (js != nullptr) jsCtx_Destroy(js);
    if (nc != nullptr) natsConnection_Destroy(nc);
  }
};

void OnAsyncPublishError(jsCtx*, jsPubAckErr*, void* closure) {
  static_cast<JetStream*>(closure)->async_errors.fetch_add(1);
}

Status Connect(const std::string& url, JetStream* j) {
  // `url` may be a comma-separated list of one NATS cluster's servers (the client takes any);
  // NATS's TLS is the process's (--nats-tls-*, SetNatsTls), as for every NATS link.
  auto nc = net::ConnectNats(url);
  if (!nc.ok()) return nc.status();
  j->nc = *nc;
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.PublishAsync.MaxPending = 1 << 16;
  jo.PublishAsync.ErrHandler = OnAsyncPublishError;
  jo.PublishAsync.ErrHandlerClosure = j;
  const natsStatus s = natsConnection_JetStream(&j->js, j->nc, &jo);
  return s == NATS_OK ? Status::OK() : net::NatsError("JetStream context", s);
}

// The LSN (message id) of the stream's last message; 0 when it is empty.
Result<uint64_t> LastPublishedLsn(JetStream& j, const std::string& stream) {
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&si, j.js, stream.c_str(), nullptr, &jerr);
  if (s != NATS_OK) return net::NatsError("stream info of " + stream, s, jerr);
  const uint64_t last_seq = si->State.LastSeq;
  const uint64_t msgs = si->State.Msgs;
  jsStreamInfo_Destroy(si);
  if (msgs == 0 || last_seq == 0) return uint64_t{0};
  natsMsg* msg = nullptr;
  s = js_GetMsg(&msg, j.js, stream.c_str(), last_seq, nullptr, &jerr);
  if (s != NATS_OK) return net::NatsError("reading the last message of " + stream, s, jerr);
  const char* id = nullptr;
  uint64_t lsn = 0;
  if (natsMsgHeader_Get(msg, "Nats-Msg-Id", &id) == NATS_OK && id != nullptr) {
    lsn = std::strtoull(id, nullptr, 10);
  }
  natsMsg_Destroy(msg);
  return lsn;
}

}  // namespace

Status Bridge::Run(const std::atomic<bool>& stop) {
  Status last_failure;
  bool first = true;
  auto done = [&] {
    return stop.load() || (options_.until_lsn > 0 && stats_.carried_lsn >= options_.until_lsn);
  };
  while (!done()) {
    if (!first) {
      std::fprintf(stderr, "relgraph-bridge: %s; retrying in %lld ms\n",
                   last_failure.ToString().c_str(), static_cast<long long>(options_.retry.count()));
      for (auto until = std::chrono::steady_clock::now() + options_.retry;
           !stop.load() && std::chrono::steady_clock::now() < until;) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (stop.load()) break;
    }
    first = false;
    JetStream j;
    if (Status s = Connect(options_.nats_url, &j); !s.ok()) {
      last_failure = s;
      continue;
    }
    if (Status s =
            net::EnsureJetStreamStream(j.js, options_.stream, options_.subject_prefix + ".>");
        !s.ok()) {
      last_failure = s;
      continue;
    }
    auto published = LastPublishedLsn(j, options_.stream);
    if (!published.ok()) {
      last_failure = published.status();
      continue;
    }
    auto client = net::Client::Connect(options_.relgraph);
    if (!client.ok()) {
      if (!net::IsRetryable(client.status())) return client.status();
      last_failure = client.status();
      continue;
    }
    auto cursors = (*client)->Cursors();
    if (!cursors.ok()) {
      if (!net::IsRetryable(cursors.status())) return cursors.status();
      last_failure = cursors.status();
      continue;
    }
    uint64_t resume = 0;  // 0: nowhere yet
    for (const net::CursorEntry& c : *cursors) {
      if (c.name == options_.cursor) resume = c.acked_lsn + 1;
    }
    // The stream is the truth of what was carried: never publish an LSN it already holds.
    if (*published > 0) resume = std::max(resume, *published + 1);
    if (resume > 0) stats_.carried_lsn = std::max(stats_.carried_lsn, resume - 1);
    if (done()) break;
    net::SubscribeRequest request;
    request.kinds = options_.kinds;
    if (resume > 0) {
      request.from = net::SubscribeFrom::kLsn;
      request.lsn = resume;
    } else if (options_.from_lsn > 0) {
      request.from = net::SubscribeFrom::kLsn;
      request.lsn = options_.from_lsn;
    } else {
      request.from = net::SubscribeFrom::kNow;
    }
    auto subscribed = (*client)->StartSubscription(request);
    if (!subscribed.ok()) {
      if (!net::IsRetryable(subscribed.status())) return subscribed.status();
      last_failure = subscribed.status();
      continue;
    }
    // Carry frames until something fails or we are stopped.
    uint64_t acked = 0;
    auto last_ack = std::chrono::steady_clock::now();
    auto ack = [&](bool force) {
      // The last message JetStream acknowledged; once --until-lsn is reached, N itself (every
      // event up to it is carried, skipped kinds included). Never the frame's next LSN while
      // running: the ACK is a record of its own, so that would move the cursor forever.
      uint64_t to = stats_.last_lsn;
      if (options_.until_lsn > 0 && stats_.carried_lsn >= options_.until_lsn) {
        to = options_.until_lsn;
      }
      if (to == 0 || to == acked) return;
      const auto now = std::chrono::steady_clock::now();
      if (!force && now - last_ack < std::chrono::milliseconds(100)) return;
      if ((*client)->Ack(options_.cursor, to).ok()) acked = to;
      last_ack = now;
    };
    Status failure;
    while (!done() && failure.ok()) {
      auto events = (*client)->NextEvents(std::chrono::milliseconds(200));
      if (!events.ok()) {
        if (events.status().code() == Code::kTimeout) {
          ack(false);
          continue;
        }
        if (!net::IsRetryable(events.status())) return events.status();
        failure = events.status();
        break;
      }
      // With --until-lsn, the frame's events past it are dropped unpublished: a frame holds
      // whatever the server had, often far past the last LSN wanted.
      const uint64_t until = options_.until_lsn > 0 ? options_.until_lsn : UINT64_MAX;
      size_t carry = 0;  // events[0, carry) are published
      while (carry < events->events.size() && events->events[carry].lsn <= until) ++carry;
      for (size_t i = 0; i < carry; ++i) {
        const net::WireEvent& e = events->events[i];
        const std::string subject =
            options_.subject_prefix + "." + std::string(net::EventKindName(e.kind));
        const std::string data = net::EventJson(e, /*newline=*/false);
        const std::string id = std::to_string(e.lsn);
        natsMsg* msg = nullptr;
        natsStatus s = natsMsg_Create(&msg, subject.c_str(), nullptr, data.data(),
                                      static_cast<int>(data.size()));
        if (s == NATS_OK) s = natsMsgHeader_Set(msg, "Nats-Msg-Id", id.c_str());
        if (s == NATS_OK) s = js_PublishMsgAsync(j.js, &msg, nullptr);
        if (msg != nullptr) natsMsg_Destroy(msg);  // still ours only when publishing failed
        if (s != NATS_OK) {
          failure = net::NatsError("publishing LSN " + id, s);
          break;
        }
      }
      if (!failure.ok()) break;
      // One wait per frame: every message of it acknowledged by JetStream before the cursor
      // may move past it.
      jsPubOptions po;
      jsPubOptions_Init(&po);
      po.MaxWait = 10'000;
      const natsStatus acked_all = js_PublishAsyncComplete(j.js, &po);
      if (acked_all != NATS_OK) {
        failure = net::NatsError("waiting for JetStream's acks", acked_all);
      } else if (j.async_errors.load() > 0) {
        failure = Status(Code::kUnavailable, "JetStream refused a message");
      } else {
        if (carry > 0) {
          stats_.published += carry;
          stats_.last_lsn = events->events[carry - 1].lsn;
        }
        stats_.carried_lsn = std::min(events->next_lsn - 1, until);
        ack(false);
      }
    }
    ack(true);  // stats_.last_lsn only ever names messages JetStream acknowledged
    if (done()) break;
    last_failure = failure.ok() ? Status(Code::kUnavailable, "the stream ended") : failure;
  }
  return Status::OK();
}

}  // namespace relgraph
