// What the server notes about each command it runs, and the one command that reads it back.
//
// RecordCommand counts the command in its thread's CommandRecorder (command_metrics.h: /metrics)
// and, when it took at least the slow-log threshold, keeps it in the SlowLog (slow_log.h) with
// its arguments rendered (net/protocol/request_text.h) and its client. AnswerSlowlog is the
// server's own SLOWLOG (docs/protocol.md, "Slow-command log").
//
// Why this design: a connection has four places where a command ends (run alone, in a batch,
// in the background, refused before running); each calls RecordCommand, so the metrics and the
// slow log cannot disagree about which commands ran or how long they took.
//
// Thread-safety: RecordCommand from the thread that owns `recorder`; AnswerSlowlog from any.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "net/server/asio.h"
#include "net/server/command_metrics.h"
#include "net/server/server_core.h"

namespace relgraph::net {

// Nanoseconds since `start` (steady clock).
inline uint64_t NanosSince(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count());
}

// One request of `opcode` with `body` from `peer`, authenticated as `client_name` (empty: no
// named client), took `ns` and ended with `code`. The slow log names it "NAME@HOST:PORT".
void RecordCommand(ServerCore& core, CommandRecorder& recorder,
                   const boost::asio::ip::tcp::endpoint& peer, std::string_view client_name,
                   uint8_t opcode, std::string_view body, uint64_t ns, Code code);

// Adds a slow-log entry for the command when it took at least the threshold; `client` names
// who sent it ("HOST:PORT", or what an in-process caller is).
void NoteIfSlow(ServerCore& core, std::string_view client, uint8_t opcode, std::string_view body,
                uint64_t ns);

// SLOWLOG: decodes `frame`'s request, reads (and with reset empties) the slow log and appends
// the reply frame to *out: as many entries as fit in a frame of max_frame bytes, the newest;
// or the error frame for a body that is not a SLOWLOG request. Returns the reply's code.
Code AnswerSlowlog(ServerCore& core, const Frame& frame, std::string* out);
// The body of that reply for request `body`, at most `max_body` bytes (the newest entries that
// fit), appended to *out; errors: the request's decoding error.
Status AppendSlowlogReply(ServerCore& core, std::string_view body, size_t max_body,
                          std::string* out);

// "HOST:PORT" ("[v6]:PORT" for IPv6).
std::string PeerText(const boost::asio::ip::tcp::endpoint& peer);

}  // namespace relgraph::net
