// Connection's change-stream subscription: events pulled into the reply buffer while the peer
// keeps up, and a short poll when the stream is caught up.
#include "net/server/connection.h"

#include "net/protocol/protocol.h"

namespace relgraph::net {
namespace {

// A subscription is pulled while fewer unsent bytes than this wait; and, caught up, looked at
// again after kEventPoll.
constexpr size_t kEventLowWater = 256 << 10;
constexpr auto kEventPoll = std::chrono::milliseconds(1);

}  // namespace

void Connection::PumpEvents() {
  if (!subscription_ || closed_ || closing_) return;
  const size_t max_body = core_.options.max_frame - kFrameHeaderBytes;
  const uint8_t opcode = subscription_->push_opcode();
  while (subscription_ && unsent_bytes() < kEventLowWater) {
    const size_t start = BeginFrame(&out_, subscription_request_id_, opcode, 0);
    const size_t body = out_.size();
    auto consumed = subscription_->Next(max_body, &out_);
    if (!consumed.ok()) {
      // The subscription is over (expired, damage); the connection serves on.
      out_.resize(start);
      AppendErrorFrame(&out_, subscription_request_id_, opcode, consumed.status());
      subscription_.reset();
      event_poll_.reset();
      break;
    }
    if (out_.size() == body) {
      out_.resize(start);
    } else {
      EndFrame(&out_, start);
    }
    if (subscription_->done()) {
      subscription_.reset();
      event_poll_.reset();
      break;
    }
    if (*consumed == 0) {
      ArmEventPoll();
      break;
    }
  }
  DoWrite();
}

void Connection::ArmEventPoll() {
  if (event_poll_armed_ || !event_poll_) return;
  event_poll_armed_ = true;
  event_poll_->expires_after(kEventPoll);
  event_poll_->async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    self->event_poll_armed_ = false;
    if (!ec) self->PumpEvents();
  });
}

}  // namespace relgraph::net
