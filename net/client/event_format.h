// How clients show a change-stream event: one text line ("12 follow 1 -> 2 at 1700000000000
// (friends)") or one JSON object named by kind ({"lsn":12,"kind":"follow","follower":1,
// "followee":2,"ts":1700000000000,"friends":true}). relgraph-cli subscribe prints them and
// relgraph-bridge publishes the JSON; docs/change-stream.md shows both.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "net/protocol/messages.h"

namespace relgraph::net {

// The line ends with "\n".
std::string EventText(const WireEvent& e);
// The object ends with "\n" when `newline`.
std::string EventJson(const WireEvent& e, bool newline = true);

// "follow,publish" -> the SUBSCRIBE kinds mask (bit k: kind k). kInvalidArgument names an
// unknown or empty name and lists the known ones.
Result<uint32_t> ParseEventKinds(std::string_view list);

}  // namespace relgraph::net
