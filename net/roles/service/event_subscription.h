// EventSubscription: a net::Subscription over the engine's change stream. It reads events
// with a ChangeReader and encodes them as EVENTS bodies (docs/protocol.md, "The change stream").
//
// Thread-safety: one thread at a time (net::Subscription's contract).
#pragma once

#include <memory>
#include <string>

#include "engine/stream/change_reader.h"
#include "net/protocol/messages.h"
#include "net/service.h"

namespace relgraph {

class EventSubscription final : public net::Subscription {
 public:
  explicit EventSubscription(std::unique_ptr<ChangeReader> reader) : reader_(std::move(reader)) {}
  uint8_t push_opcode() const override { return static_cast<uint8_t>(net::Opcode::kEvents); }
  Result<size_t> Next(size_t max_body, std::string* body) override;

 private:
  std::unique_ptr<ChangeReader> reader_;
};

// The wire form of an event.
net::WireEvent ToWire(const ChangeEvent& e);

}  // namespace relgraph
