#include "net/client/group_client.h"

#include <algorithm>

namespace relgraph::net {

Result<std::unique_ptr<GroupClient>> GroupClient::Connect(GroupClientOptions options) {
  if (options.nodes.empty()) return Status::InvalidArgument("a group client needs its nodes");
  for (const std::string& n : options.nodes) {
    std::string host;
    uint16_t port = 0;
    RELGRAPH_RETURN_IF_ERROR(ParseHostPort(n, &host, &port));
  }
  std::unique_ptr<GroupClient> g(new GroupClient(std::move(options)));
  Status why;
  if (g->Link(false, &why) == nullptr) {
    // No member answered now; calls keep looking until their failover timeout.
    if (why.code() != Code::kIOError && why.code() != Code::kTimeout) return why;
  }
  return g;
}

Client* GroupClient::Link(bool to_replica, Status* why) {
  std::unique_ptr<Client>& slot = to_replica ? replica_ : primary_;
  if (slot && slot->healthy()) return slot.get();
  slot.reset();
  // The primary known, else the members in turn.
  std::string address = to_replica ? std::string() : primary_address_;
  if (address.empty()) {
    address = options_.nodes[next_node_ % options_.nodes.size()];
    ++next_node_;
  }
  ClientOptions o = options_.connection;
  if (Status s = ParseHostPort(address, &o.host, &o.port); !s.ok()) {
    *why = s;
    primary_address_.clear();
    return nullptr;
  }
  auto c = Client::Connect(o);
  if (!c.ok()) {
    *why = Status(c.status().code(), address + ": " + c.status().message());
    if (!to_replica) primary_address_.clear();  // ask the members next time
    return nullptr;
  }
  slot = std::move(*c);
  if (!to_replica) primary_address_ = address;
  return slot.get();
}

void GroupClient::Drop(bool to_replica) {
  (to_replica ? replica_ : primary_).reset();
  if (!to_replica) primary_address_.clear();
}

void GroupClient::Redirect(const std::string& address) {
  primary_.reset();
  primary_address_ = address;  // empty: no primary now, ask the members again
  if (std::find(options_.nodes.begin(), options_.nodes.end(), address) == options_.nodes.end() &&
      !address.empty()) {
    options_.nodes.push_back(address);  // a member the caller did not list
  }
}

bool GroupClient::Backoff(std::chrono::steady_clock::time_point deadline) {
  ++retries_;
  // Sent to a named primary: at once the first time, then every 5 ms (a switchover's
  // hand-over lasts tens of ms, during which the two name each other). Without one (an
  // election, a lost connection): 2, 4, 8 ... 200 ms.
  std::chrono::milliseconds wait{0};
  if (!primary_address_.empty()) {
    ++named_;
    if (named_ > 1) wait = std::chrono::milliseconds(5);
  } else {
    ++unnamed_;
    wait = std::chrono::milliseconds(std::min(200, 1 << std::min(unnamed_, 8)));
  }
  if (std::chrono::steady_clock::now() + wait > deadline) return false;
  std::this_thread::sleep_for(wait);
  return true;
}

void GroupClient::NoteWrite(Client* primary) {
  auto position = primary->Call(PositionRequest{});
  floor_unknown_ = !position.ok();
  if (position.ok()) ReadAtLeast(position->applied_lsn);
}

bool GroupClient::ReplicaHasFloor(Client* replica) {
  if (floor_unknown_) return false;
  const auto deadline = std::chrono::steady_clock::now() + options_.read_wait;
  for (auto wait = std::chrono::milliseconds(1);;
       wait = std::min(wait * 2, std::chrono::milliseconds(20))) {
    auto position = replica->Call(PositionRequest{});
    if (!position.ok()) return false;
    if (position->applied_lsn >= read_floor_) return true;
    if (std::chrono::steady_clock::now() + wait > deadline) return false;
    std::this_thread::sleep_for(wait);
  }
}

Status GroupClient::Unknown(const Status& last, Opcode op, bool sent) const {
  std::string what = std::string(OpcodeName(op));
  if (sent) {
    return Status(Code::kUnavailable, what + " was sent but its outcome is unknown (" +
                                          last.ToString() +
                                          "); it is not sent again: it is not retry-safe");
  }
  return Status(Code::kUnavailable, "no primary answered " + what + " within " +
                                        std::to_string(options_.failover_timeout.count()) +
                                        " ms (last: " + last.ToString() + ")");
}

}  // namespace relgraph::net
