// MoveBuckets: moves a range of buckets from the shard that owns them to another, online
// (relgraph-admin cluster move-bucket; docs/cluster.md, "Moving buckets online").
//
// Why the admin tool drives it through the map: every shard already watches the shard map,
// so each phase is one compare-and-set of the map, and each shard does its part when it sees
// it (net/roles/cluster/shard_node.h). What the tool adds is waiting, between phases, for what
// the next one needs: the new owner's inbox held before anything is routed to it; every
// outbox routing by the flipped map, and the old owner's inbox past every message routed by
// the old one, before the old owner exports; the new owner's done mark before the move line
// goes. A move interrupted anywhere (the tool killed, a timeout) is resumed by running the
// same command again: it goes on from the phase the map holds.
//
// Thread-safety: a free function; one move per cluster at a time (the map holds one line).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "net/client/client.h"
#include "net/cluster/nats_link.h"
#include "storage/status.h"

namespace relgraph::admin {

struct BucketMoveRequest {
  std::string nats_url;
  net::ClusterNames names;
  uint32_t first = 0, last = 0;               // the buckets, inclusive
  uint32_t to = 0;                            // the shard taking them
  std::chrono::milliseconds timeout{120000};  // per wait
  net::ClientOptions client;                  // token and TLS for the shards
};

struct BucketMoveReport {
  uint64_t id = 0;
  uint32_t from = 0;
  uint64_t map_version = 0;  // of the map without the move line
  // Milliseconds: waiting for the new owner's inbox to hold; from the flip until the old
  // owner applied everything routed to it before; from then until the state was in; the
  // whole move, in this run. `pause` is from the flip until the new owner took the buckets'
  // commands (they are answered `moving` meanwhile; ClusterClient retries), across runs: from
  // the flip's time in the map's move line (wall clock), whichever run wrote it.
  double prepare_ms = 0, drain_ms = 0, copy_ms = 0, total_ms = 0, pause_ms = 0;
  // False when the map's move line has no flip time (written by an older tool): `pause` is
  // then from this run's start only.
  bool pause_from_flip = true;
};

// Whether a shard's INFO `fields` report a map at least as new as (generation, version) by
// net/cluster/placement.h's order: `prefix` "cluster_map" for the map it holds,
// "cluster_outbox_map" for the one its outbox routes by (PREFIX_generation, PREFIX_version;
// a shard without the generation field holds generation 1). Comparing versions alone would
// take a shard still on a map from before a restore (a higher revision of a lower
// generation) for one that saw the move.
bool InfoHoldsMap(const std::map<std::string, uint64_t>& fields, const std::string& prefix,
                  uint64_t generation, uint64_t version);

// kInvalidArgument for buckets out of range, an unknown shard, buckets of several owners or
// already on `to`; kAlreadyExists when another move is in progress (the map names it);
// kTimeout naming what did not happen within `timeout` (run it again to resume); NATS and
// shard errors as they come. `progress` gets one line per phase.
Result<BucketMoveReport> MoveBuckets(const BucketMoveRequest& request,
                                     const std::function<void(const std::string&)>& progress);

}  // namespace relgraph::admin
