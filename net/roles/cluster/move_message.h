// MoveMessage: a bucket move's state as the old owner publishes it on the move's subject
// (docs/cluster.md, "Moving buckets online"). The state, Db::ExportUsers' records, is written
// as one byte string and cut into pieces that fit a NATS message:
//   state := entry{*}            entry := type:u8 len:u32 payload:u8[len]
//   piece := version:u8=1 attempt:u64 index:u32 pieces:u32 hash:u64 bytes:u8[*]
// (little-endian). `hash` is XXH3_64bits of the whole state; every piece of one attempt
// carries the same attempt, pieces and hash. An old owner that restarts during the copy
// publishes the state again under a new attempt; the new owner takes the first attempt it
// has whole.
//
// Thread-safety: EncodeMovePieces is pure; a MoveAssembler is used by one thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/db.h"
#include "storage/status.h"

namespace relgraph {

// Piece bytes past the header; NATS refuses messages over its max_payload (1 MiB by default).
inline constexpr size_t kMovePieceBytes = 512 * 1024;

// The pieces of `state` (at least one, empty state included). REQUIRES: piece_bytes >= 1.
std::vector<std::string> EncodeMovePieces(uint64_t attempt, std::span<const Db::MovedState> state,
                                          size_t piece_bytes = kMovePieceBytes);

class MoveAssembler {
 public:
  // Takes one piece, in any order, repeats included. kInvalidArgument naming what is wrong
  // with a piece that does not parse, or that disagrees with its attempt's other pieces.
  Status Add(std::string_view piece);
  // The state of the first attempt whose pieces are all in, once there is one. kCorruption
  // when its bytes fail the hash or do not parse as entries; that attempt is then dropped
  // (its pieces are ignored from then on) and the next whole one, if any, is taken next.
  std::optional<Result<std::vector<Db::MovedState>>> Take();

 private:
  struct Attempt {
    uint32_t pieces = 0;
    uint64_t hash = 0;
    std::map<uint32_t, std::string> got;
  };
  Result<std::vector<Db::MovedState>> Decode(uint64_t attempt) const;

  std::map<uint64_t, Attempt> attempts_;
  std::optional<uint64_t> complete_;  // the first attempt found whole
  std::vector<uint64_t> damaged_;     // attempts whose whole failed to decode
};

}  // namespace relgraph
