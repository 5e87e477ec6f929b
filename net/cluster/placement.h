// Placement: which shard of a relgraph cluster serves a user (docs/cluster.md, "Placement").
//
// Users map to a fixed number of virtual buckets by a documented hash (BucketOf); the shard
// map says which shard owns each bucket. Moving a bucket moves its users; the hash never
// changes, so a user's bucket is the same on every node, in every client, forever.
//
// The map's text form (stored in a JetStream key-value bucket, readable with any NATS tool):
//   relgraph-shard-map 1            format version
//   buckets 4096                    the bucket count, 1..65536
//   shard <id> <host:port>          one line per shard: id 1..65535, its relgraphd address
//   owner <first>-<last> <id>       buckets first..last (inclusive) belong to shard id
//   move <first>-<last> <from> <to> <phase> <id> [<flipped_ms>]
//                                   at most one: buckets first..last are moving from shard
//                                   `from` to shard `to`; phase prepare, flip or copy; id a
//                                   number naming this move (its subject and done key);
//                                   flipped_ms, in phases flip and copy, the wall-clock time
//                                   of the flip (ms since the Unix epoch), absent in maps
//                                   written before it was recorded
// Every bucket has exactly one owner line covering it; owners are known shards. The moving
// buckets are owned by `from` in phase prepare and by `to` after it. Lines are separated by
// '\n'; no other lines are allowed.
//
// Thread-safety: pure functions and plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "storage/status.h"

namespace relgraph::net {

inline constexpr uint32_t kDefaultBuckets = 4096;
inline constexpr uint32_t kMaxBuckets = 65536;

// The bucket of `user` among `buckets`: XXH3_64bits of the user id's 8 little-endian bytes
// (seed 0), modulo `buckets`. REQUIRES: buckets >= 1.
uint32_t BucketOf(uint64_t user, uint32_t buckets);

struct ShardInfo {
  uint32_t id = 0;
  std::string address;  // host:port of its relgraphd
  friend bool operator==(const ShardInfo&, const ShardInfo&) = default;
};

// A bucket move in progress (docs/cluster.md, "Moving buckets online"). Its phases, in order:
//   prepare  the new owner holds its inbox (applies nothing more) and says so in INFO;
//   flip     the buckets belong to `to`: changes about their users are routed there (and
//            wait in its inbox); `from` answers `moved`, `to` answers `moving` (retry) until
//            it has the state; `from` still decides on arrival for the moving users;
//   copy     `from` hands the users' state over on the move's subject, `to` brings it in,
//            marks the move done in the key-value bucket, and releases its inbox.
// Then the move line goes.
enum class MovePhase : uint8_t { kPrepare = 1, kFlip = 2, kCopy = 3 };
std::string_view MovePhaseName(MovePhase phase);

struct BucketMove {
  uint32_t first = 0, last = 0;  // the buckets moving, inclusive
  uint32_t from = 0, to = 0;     // shard ids
  MovePhase phase = MovePhase::kPrepare;
  uint64_t id = 0;  // >= 1, unique per move
  // When the flip was written (ms since the Unix epoch, the writer's clock); 0 in phase
  // prepare, and in a map written without it.
  uint64_t flipped_ms = 0;
  bool Covers(uint32_t bucket) const { return bucket >= first && bucket <= last; }
  friend bool operator==(const BucketMove&, const BucketMove&) = default;
};

struct ShardMap {
  uint64_t version = 0;  // the key-value revision it was read at (0: not stored yet)
  uint32_t buckets = kDefaultBuckets;
  std::vector<ShardInfo> shards;   // in id order
  std::vector<uint32_t> owner;     // owner[bucket] = shard id; size() == buckets
  std::optional<BucketMove> move;  // a move in progress

  // REQUIRES: a valid map (ParseShardMap's, or ValidateShardMap OK).
  uint32_t OwnerOf(uint64_t user) const { return owner[BucketOf(user, buckets)]; }
  // Whether `user` is in the buckets of the move in progress (false without one).
  bool Moving(uint64_t user) const { return move && move->Covers(BucketOf(user, buckets)); }
  const ShardInfo* Find(uint32_t id) const;  // nullptr when unknown
  // How many buckets each shard owns, in shards' order.
  std::vector<uint32_t> BucketCounts() const;
};

// kInvalidArgument naming the first rule broken: bucket count out of range, owner size,
// shard ids 0 or repeated or out of order, an empty or malformed address, an owner that is
// no shard, a move whose range, shards, id or owners break the rules above.
Status ValidateShardMap(const ShardMap& map);
// The text form (version not included: it is the store's revision). REQUIRES: valid.
std::string EncodeShardMap(const ShardMap& map);
// kInvalidArgument naming the line that breaks the format, or ValidateShardMap's error.
Result<ShardMap> ParseShardMap(std::string_view text);
// `shards` (in any order) owning equal contiguous ranges of `buckets`, the first shards one
// more when it does not divide. kInvalidArgument as ValidateShardMap.
Result<ShardMap> EvenShardMap(std::vector<ShardInfo> shards, uint32_t buckets = kDefaultBuckets);

}  // namespace relgraph::net
