// libFuzzer target: arbitrary bytes through the frame decoder and, for each frame, every body
// decoder its opcode has in the command table (net/protocol/command_table.h): the request a
// server decodes, the reply a client decodes, the push a client decodes, and the error body
// any reply may carry. The table drives it, so a new command is fuzzed without a line here.
// The stream is split into fragments the way a socket may deliver them. Built with clang only
// (-DRELGRAPH_FUZZ=ON, see tools/fuzz.sh); any crash, sanitizer report or hang is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "net/protocol/command_table.h"
#include "net/protocol/frame.h"
#include "net/protocol/messages.h"

namespace relgraph::net {
namespace {

template <typename Body>
void TryDecode(std::string_view body) {
  Body b;
  WireDecode(body, &b, "fuzz").IgnoreError();
}

void DecodeBody(uint8_t opcode, std::string_view body) {
  TryDecode<ErrorBody>(body);  // an error reply's body, whatever its opcode
  ForEachCommand([&]<typename Row>() {
    if (static_cast<uint8_t>(Row::kOpcode) != opcode) return;
    using Body = typename Row::Body;
    if constexpr (Row::kDirection == Direction::kRequest) {
      TryDecode<Body>(body);                  // what a server decodes
      TryDecode<typename Body::Reply>(body);  // what a client decodes in reply
    } else if constexpr (std::is_same_v<Body, RecordsBody>) {
      RecordsBody header;  // as a replica reads RECORDS: without a copy per record
      ForEachWireRecord(body, &header, [](uint64_t, uint8_t, std::string_view) {
        return Status::OK();
      }).IgnoreError();
    } else if constexpr (!std::is_same_v<Body, RawBody>) {
      TryDecode<Body>(body);  // a push a client decodes
    }
  });
  if (opcode == static_cast<uint8_t>(Opcode::kHello)) {  // version 1 of the handshake
    TryDecode<HelloRequestV1>(body);
    TryDecode<HelloReplyV1>(body);
  }
}

}  // namespace
}  // namespace relgraph::net

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace relgraph::net;
  if (size == 0) return 0;
  // The first byte picks the fragment size, the rest is the stream.
  const size_t step = 1 + data[0] % 64;
  const std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string buffer;
  for (size_t pos = 0; pos < stream.size(); pos += step) {
    buffer.append(stream.substr(pos, step));
    for (;;) {
      const DecodeResult r = DecodeFrame(buffer, 4096);
      if (r.state == DecodeState::kBad) return 0;
      if (r.state == DecodeState::kNeedMore) break;
      DecodeBody(r.frame.opcode, r.frame.body);
      StatusFromReply(r.frame).IgnoreError();
      buffer.erase(0, r.frame.size);
    }
  }
  return 0;
}
