#include "net/protocol/frame.h"

#include "net/protocol/messages.h"
#include "net/protocol/protocol.h"

namespace relgraph::net {
namespace {

uint32_t LoadU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return v;
}

}  // namespace

DecodeResult DecodeFrame(std::string_view buffer, uint32_t max_frame) {
  DecodeResult r;
  if (buffer.size() < 4) return r;
  const uint32_t length = LoadU32(buffer.data());
  if (length < kMinFrameLength) {
    r.state = DecodeState::kBad;
    r.error = Status(Code::kProtocolError,
                     "frame length " + std::to_string(length) + " is below the minimum of 6");
    return r;
  }
  if (uint64_t{length} + 4 > max_frame) {
    r.state = DecodeState::kBad;
    r.error = Status(Code::kResourceExhausted, "frame of " + std::to_string(uint64_t{length} + 4) +
                                                   " bytes exceeds the limit of " +
                                                   std::to_string(max_frame));
    return r;
  }
  if (buffer.size() < size_t{length} + 4) return r;
  r.state = DecodeState::kFrame;
  r.frame.request_id = LoadU32(buffer.data() + 4);
  r.frame.opcode = static_cast<uint8_t>(buffer[8]);
  r.frame.flags_or_status = static_cast<uint8_t>(buffer[9]);
  r.frame.body = buffer.substr(kFrameHeaderBytes, length - kMinFrameLength);
  r.frame.size = size_t{length} + 4;
  return r;
}

size_t BeginFrame(std::string* out, uint32_t request_id, uint8_t opcode, uint8_t flags_or_status) {
  const size_t start = out->size();
  WireFixed(out, uint32_t{0});
  WireFixed(out, request_id);
  out->push_back(static_cast<char>(opcode));
  out->push_back(static_cast<char>(flags_or_status));
  return start;
}

void EndFrame(std::string* out, size_t frame_start) {
  const uint32_t length = static_cast<uint32_t>(out->size() - frame_start - 4);
  for (int i = 0; i < 4; ++i) (*out)[frame_start + i] = static_cast<char>(length >> (8 * i));
}

void AppendErrorFrame(std::string* out, uint32_t request_id, uint8_t opcode, const Status& status) {
  const size_t start = BeginFrame(out, request_id, opcode, static_cast<uint8_t>(status.code()));
  ErrorBody body{status.detail(), status.message().substr(0, 1024)};
  WirePut(out, body);
  EndFrame(out, start);
}

Status StatusFromReply(const Frame& reply) {
  if (reply.flags_or_status == 0) return Status::OK();
  ErrorBody body;
  if (Status s = WireDecode(reply.body, &body, "error reply"); !s.ok()) return s;
  if (reply.flags_or_status > kMaxCode) {
    return Status(Code::kProtocolError, "reply status " + std::to_string(reply.flags_or_status) +
                                            " is not a known code: " + body.message);
  }
  return Status(static_cast<Code>(reply.flags_or_status), body.message, body.detail);
}

}  // namespace relgraph::net
