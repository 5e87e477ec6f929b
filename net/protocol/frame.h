// Framing: the pure incremental decoder and the frame encoders (docs/protocol.md, "Frames").
//
// Why this design: the decoder is a function of the bytes received so far and nothing else (no
// socket, no state), so the server can call it on whatever a read delivered and tests can feed
// it one byte at a time. It only looks at the header: body layout is checked per command.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/status.h"

namespace relgraph::net {

struct Frame {
  uint32_t request_id = 0;
  uint8_t opcode = 0;
  uint8_t flags_or_status = 0;  // requests: flags (0); replies: status code
  std::string_view body;        // points into the decoded buffer
  size_t size = 0;              // bytes the frame occupies, header included
};

enum class DecodeState { kFrame, kNeedMore, kBad };

struct DecodeResult {
  DecodeState state = DecodeState::kNeedMore;
  Frame frame;   // kFrame
  Status error;  // kBad: kProtocolError (length below 6) or kResourceExhausted (over max_frame)
};

// Decodes the first frame of `buffer`, whose frames may not exceed max_frame bytes in all.
// kNeedMore says nothing is wrong yet; kBad means the stream cannot be resynchronized.
DecodeResult DecodeFrame(std::string_view buffer, uint32_t max_frame);

// Appends a frame header whose length is patched by EndFrame; returns the offset to pass it.
size_t BeginFrame(std::string* out, uint32_t request_id, uint8_t opcode, uint8_t flags_or_status);
void EndFrame(std::string* out, size_t frame_start);

// Appends a whole error reply (or, with request_id 0 and opcode kNotice, a notice).
// REQUIRES: !status.ok().
void AppendErrorFrame(std::string* out, uint32_t request_id, uint8_t opcode, const Status& status);

// The Status an error reply's frame carries (its code, message and detail); OK for status 0.
Status StatusFromReply(const Frame& reply);

}  // namespace relgraph::net
