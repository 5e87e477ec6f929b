// Placement: which shard of a relgraph cluster serves a user (docs/cluster.md, "Placement").
//
// Users map to a fixed number of virtual buckets by a documented hash (BucketOf); the shard
// map says which shard owns each bucket. Moving a bucket moves its users; the hash never
// changes, so a user's bucket is the same on every node, in every client, forever.
//
// The map's text form (stored in a JetStream key-value bucket, readable with any NATS tool):
//   relgraph-shard-map 1            format version
//   buckets 4096                    the bucket count, 1..65536
//   generation <g>                  the map's generation, >= 2; absent: generation 1 (see
//                                   below)
//   shard <id> <host:port>          one line per shard: id 1..65535, its relgraphd address;
//   shard <id> <host:port>,<host:port>... group <name>
//                                   a shard served by replication group <name> (its lease in
//                                   the cluster's NATS, docs/replication.md): every member's
//                                   address, any one of them the primary at a time
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
// Which map is newer: (generation, version), compared in that order (NewerThan). The version
// is the key-value revision, which only goes up in one JetStream store but restarts at 1 in a
// fresh one; the generation is in the text, so it survives a restore. Writing a map into a
// store that did not hold its predecessor (`relgraph-admin cluster import-map`, or `cluster
// init --force` over shards that hold a map) raises the generation above every map the
// shards hold, so they take it, and every map written after it, although its revision is
// lower. Every other write keeps the generation of the map it replaces.
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
  std::string address;  // host:port of its relgraphd; with a group, its first member's
  // A shard served by a replication group: the group's name (1..64 of [A-Za-z0-9_-]) and
  // every member's host:port, `address` first. Both empty for a shard of one node.
  std::string group;
  std::vector<std::string> members;
  // Where the shard may be reached: its members, or its one address.
  std::vector<std::string> Addresses() const {
    return members.empty() ? std::vector<std::string>{address} : members;
  }
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
  uint64_t version = 0;     // the key-value revision it was read at (0: not stored yet)
  uint64_t generation = 1;  // raised by a restore (above); in the text when >= 2
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
  // Whether this map is newer than `other`: a higher generation, or the same one and a higher
  // version (see "Which map is newer" above).
  bool NewerThan(const ShardMap& other) const {
    return generation != other.generation ? generation > other.generation : version > other.version;
  }
};

// kInvalidArgument naming the first rule broken: bucket count out of range, owner size,
// shard ids 0 or repeated or out of order, an empty or malformed address, an owner that is
// no shard, a move whose range, shards, id or owners break the rules above.
Status ValidateShardMap(const ShardMap& map);
// The text form (version not included: it is the store's revision). REQUIRES: valid.
std::string EncodeShardMap(const ShardMap& map);
// kInvalidArgument naming the line that breaks the format, or ValidateShardMap's error.
Result<ShardMap> ParseShardMap(std::string_view text);
// What the map says, without its version and generation: XXH3_64bits (seed 0) of its text
// form written as generation 1. Two maps with one digest place every user alike and name the
// same move. Shards report it in INFO (cluster_map_digest). REQUIRES: a valid map.
uint64_t ShardMapDigest(const ShardMap& map);

// The map with its version, as a shard keeps it in its data directory (map_file.h) and as
// `relgraph-admin cluster export-map` writes it (docs/cluster.md, "Backing up the map"):
//   relgraph-cluster-map 1          format version
//   version <n>                     the map's version (its key-value revision when read)
//   <the map's text form>           as EncodeShardMap
// REQUIRES: a valid map.
std::string EncodeVersionedShardMap(const ShardMap& map);
// kInvalidArgument naming the rule broken (first line, version line, or ParseShardMap's).
Result<ShardMap> ParseVersionedShardMap(std::string_view text);
// `shards` (in any order) owning equal contiguous ranges of `buckets`, the first shards one
// more when it does not divide. kInvalidArgument as ValidateShardMap.
Result<ShardMap> EvenShardMap(std::vector<ShardInfo> shards, uint32_t buckets = kDefaultBuckets);

}  // namespace relgraph::net
