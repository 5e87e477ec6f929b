// libFuzzer target: arbitrary bytes through the frame decoder and every request body decoder,
// split into fragments the way a socket may deliver them. Built with clang only
// (-DRELGRAPH_FUZZ=ON, see tools/fuzz.sh); any crash, sanitizer report or hang is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "net/protocol/frame.h"
#include "net/protocol/messages.h"

namespace relgraph::net {
namespace {

template <typename Request>
void TryDecode(std::string_view body) {
  Request r;
  WireDecode(body, &r, "fuzz").IgnoreError();
}

void DecodeBody(uint8_t opcode, std::string_view body) {
  switch (static_cast<Opcode>(opcode)) {
    case Opcode::kHello:
      return TryDecode<HelloRequest>(body);
    case Opcode::kFollow:
      return TryDecode<FollowRequest>(body);
    case Opcode::kUnfollow:
      return TryDecode<UnfollowRequest>(body);
    case Opcode::kRelation:
      return TryDecode<RelationRequest>(body);
    case Opcode::kRelations:
      return TryDecode<RelationsRequest>(body);
    case Opcode::kFollowing:
      return TryDecode<FollowingRequest>(body);
    case Opcode::kCounts:
      return TryDecode<CountsRequest>(body);
    case Opcode::kKnownFollowers:
      return TryDecode<KnownFollowersRequest>(body);
    case Opcode::kRemoveUser:
      return TryDecode<RemoveUserRequest>(body);
    case Opcode::kSubscribe:
      return TryDecode<SubscribeRequest>(body);
    case Opcode::kAck:
      return TryDecode<AckRequest>(body);
    case Opcode::kDeleteCursor:
      return TryDecode<DeleteCursorRequest>(body);
    case Opcode::kBlock:
      return TryDecode<BlockRequest>(body);
    case Opcode::kSetPrivate:
      return TryDecode<SetPrivateRequest>(body);
    case Opcode::kBlocks:
      return TryDecode<BlocksRequest>(body);
    default:
      // Replies too: the client decodes what a (possibly hostile) server sends.
      TryDecode<PageReply>(body);
      TryDecode<InfoReply>(body);
      TryDecode<ErrorBody>(body);
      TryDecode<EventsBody>(body);
      TryDecode<CursorsReply>(body);
      TryDecode<CountedPageReply>(body);
      TryDecode<BlockReply>(body);
      TryDecode<SetPrivateReply>(body);
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
