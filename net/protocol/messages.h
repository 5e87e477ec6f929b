// Every command's request and reply body, as plain structs in the protocol's own vocabulary
// (net/ knows no engine type), one header per family; this one includes them all. Field order
// is wire order; docs/protocol.md lists the same.
//
// Each request names its opcode (kOpcode) and its reply type (Reply), so the client's generic
// Call<Request>() and the server's command table are typed end to end. What a command is
// beyond its bytes (family, cluster, routing) is its row in net/protocol/command_table.h.
//
// Thread-safety: plain data.
#pragma once

#include "net/protocol/messages_access.h"
#include "net/protocol/messages_admin.h"
#include "net/protocol/messages_common.h"
#include "net/protocol/messages_feed.h"
#include "net/protocol/messages_graph.h"
#include "net/protocol/messages_replication.h"
#include "net/protocol/messages_stream.h"
