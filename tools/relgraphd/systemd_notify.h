// Readiness and stopping notices for systemd's Type=notify services (sd_notify(3)), without
// libsystemd: one datagram to the unix socket named by $NOTIFY_SOCKET.
//
// Why not libsystemd: the protocol is one sendto() of "KEY=value" lines, documented as stable;
// a dependency for it would be heavier than the code. Outside systemd ($NOTIFY_SOCKET unset)
// every call does nothing and reports OK.
//
// Thread-safety: stateless; callable from any thread.
#pragma once

#include <string_view>

#include "storage/status.h"

namespace relgraph {

// Sends `state` (for example "READY=1\nSTATUS=serving") to $NOTIFY_SOCKET. A name starting
// with '@' is in the abstract namespace. kInvalidArgument for a name too long for a unix
// socket address, kUnavailable when the send fails.
Status NotifySystemd(std::string_view state);

}  // namespace relgraph
