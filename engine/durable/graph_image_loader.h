// GraphImageLoader: turns the graph records of a snapshot (engine/graph/graph_image.h) back into
// a Graph, checking everything that could make the graph unsafe or wrong to use: ids in range,
// no self-edges, strict key order within every list, records in order, each list complete, and
// every count (per user, friends; in total, users and edges against the footer). What it does
// not check is that each edge's two copies agree; `relgraph-admin verify` does (O(edges log)).
// AddImageRecords hands the records a Graph appends to a snapshot writer, packing their lists.
//
// Thread-safety: a loader is used by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/graph/graph_image.h"
#include "engine/graph/packed_list.h"
#include "storage/snapshot/snapshot_file.h"
#include "storage/status.h"

namespace relgraph {

// Adds each record of `records` (a concatenation, as AppendImage* produce) to `writer`, each
// list record packed (version 5). Call it outside the engine's lock: packing is the costly part.
Status AddImageRecords(std::string_view records, SnapshotWriter* writer);

class GraphImageLoader {
 public:
  explicit GraphImageLoader(const GraphOptions& options);
  ~GraphImageLoader();

  // The footer's counts; REQUIRED before the first block.
  Status Begin(uint64_t users, uint64_t edges);
  // One graph block's records, in file order. kCorruption names what is wrong.
  Status AddBlock(std::string_view raw);
  // Checks the totals and hands the graph over. The loader is spent afterwards.
  Result<std::unique_ptr<Graph>> Finish();

 private:
  Status AddIds(std::string_view record);
  // The image's time unit (ImageTag::kTimeUnit), before its ids; IndexIds refuses an image
  // whose unit is not the graph's.
  Status AddTimeUnit(std::string_view record);
  // Builds the id map from every id received, once, before the first list (or at Finish).
  Status IndexIds();
  // A version-3/4 list record (`kind` kFollowing or kFans), copied into unpacked_.
  Status AddRaw(ImageTag kind, std::string_view record);
  // A version-5 packed list part (engine/graph/packed_list.h) whose header is `h` and whose
  // payload (h.payload_bytes()) starts at `payload`, decoded into unpacked_.
  Status AddPacked(const PackedListHeader& h, const char* payload);
  // A part of a following or fan list, `count` entries in list order.
  Status AddFollowing(InternalId user, uint32_t total, uint32_t count, const EdgeEntry* entries);
  Status AddFans(InternalId user, uint32_t total, uint32_t count, const EdgeEntry* entries);
  // Checks `n` entries (get(i) returns entry i) after `*prev`: ids in range, no self-edge, no
  // unused bits, keys strictly increasing. True when every one is valid, and then *prev and
  // *mutual (the kMutual count) move on.
  template <typename Get>
  bool RunIsValid(InternalId user, uint32_t n, Get get, EntryKey* prev, uint32_t* mutual) const;
  // The kCorruption naming the first entry RunIsValid refused (called only after it did).
  template <typename Get>
  Status NameBadEntry(InternalId user, const char* what, uint32_t n, Get get,
                      const EntryKey& prev) const;
  // Moves to the list (user, kind): lists come in user order, following before fans, and the
  // parts of one list back to back. `total` is the part's claim of the list's length.
  Status EnterList(InternalId user, ImageTag kind, uint32_t total, uint32_t count);
  Status Corrupt(const std::string& what) const;

  std::unique_ptr<Graph> graph_;
  uint64_t want_users_ = 0, want_edges_ = 0;
  bool begun_ = false;
  uint32_t image_unit_ms_ = 1;
  std::vector<UserId> externals_;  // by internal id, until IndexIds
  bool ids_indexed_ = false;
  std::thread indexer_;     // IdMap::IndexAll, started by IndexIds, joined by Finish
  size_t repeated_id_ = 0;  // its result; written by indexer_ before the join
  // The list being filled.
  InternalId user_ = kNoInternalId;
  ImageTag kind_ = ImageTag::kIds;
  uint32_t total_ = 0, filled_ = 0;
  EntryKey prev_{-1, 0};
  uint32_t mutual_ = 0;
  std::vector<EdgeEntry> fan_parts_;  // a fan list that arrives in several parts
  std::vector<EdgeEntry> unpacked_;   // the entries of the list record at hand
  uint64_t following_edges_ = 0, fan_edges_ = 0;
  uint64_t following_mutual_ = 0, fans_mutual_ = 0;
};

}  // namespace relgraph
