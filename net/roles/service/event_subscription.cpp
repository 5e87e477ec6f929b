#include "net/roles/service/event_subscription.h"

#include <algorithm>

#include "storage/coding.h"

namespace relgraph {

static_assert(static_cast<uint8_t>(net::EventKind::kUnhide) ==
              static_cast<uint8_t>(ChangeKind::kUnhide));
static_assert(static_cast<uint8_t>(net::EventKind::kWithdraw) ==
              static_cast<uint8_t>(ChangeKind::kWithdraw));
static_assert(net::kAllEventKinds == kAllChangeKinds);

namespace {
// The event's kind-specific byte (docs/protocol.md, EVENTS).
uint8_t WireDetail(const ChangeEvent& e) {
  return e.kind == ChangeKind::kPublish ? e.post_kind : e.flags;
}
}  // namespace

net::WireEvent ToWire(const ChangeEvent& e) {
  net::WireEvent w;
  w.lsn = e.lsn;
  w.kind = static_cast<net::EventKind>(e.kind);
  w.ts = e.ts;
  w.a = e.a;
  w.b = e.b;
  w.friends = e.became_friends;
  w.detail = WireDetail(e);
  w.evicted = e.evicted;
  return w;
}

Result<size_t> EventSubscription::Next(size_t max_body, std::string* body) {
  // As many events as the body and a list may hold.
  const size_t max_events = std::min(net::kMaxWireList, (max_body - 10) / net::kWireEventBytes);
  // next_lsn:u64 events:list<event>, encoded in place: the two counts are known at the end.
  const size_t start = body->size();
  body->append(10, '\0');
  uint16_t count = 0;
  auto records = reader_->Read(max_events, [&](const ChangeEvent& e) {
    // The event's 43 bytes written in place (net::WirePut of ToWire(e) gives the same bytes,
    // field by field; this is the stream's hot loop).
    const size_t at = body->size();
    body->resize(at + net::kWireEventBytes);
    char* p = body->data() + at;
    EncodeFixed64(p, e.lsn);
    p[8] = static_cast<char>(e.kind);
    EncodeFixed64(p + 9, static_cast<uint64_t>(e.ts));
    EncodeFixed64(p + 17, e.a);
    EncodeFixed64(p + 25, e.b);
    p[33] = e.became_friends ? 1 : 0;
    p[34] = static_cast<char>(WireDetail(e));
    EncodeFixed64(p + 35, e.evicted);
    ++count;
  });
  if (!records.ok() || count == 0) {
    body->resize(start);
    return records;
  }
  EncodeFixed64(body->data() + start, reader_->next_lsn());
  (*body)[start + 8] = static_cast<char>(count & 0xff);
  (*body)[start + 9] = static_cast<char>(count >> 8);
  return records;
}

}  // namespace relgraph
