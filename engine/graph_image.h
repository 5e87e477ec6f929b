// Graph images: the follow graph in the engine's own layout, as the graph blocks of a
// version-3 snapshot (docs/snapshot-format.md, "Graph image"). Graph::BeginImage and
// AppendImage* (graph.h) produce the records; GraphImageLoader turns them back into a Graph.
//
// Why this design: a snapshot of external-id edge lists makes recovery hash every id again and
// rebuild every fan list by sorting (2.8 s at 10M edges). An image holds the external id of
// each internal id, and both lists of every user as they sit in memory (internal ids, kMutual
// bits, key order), so loading is one hash insert per user plus sequential copies. Because both
// directions are stored, the image must be one point in time; graph.h says how it stays one
// while writes go on.
//
// The loader checks everything that could make the graph unsafe or wrong to use: ids in range,
// no self-edges, strict key order within every list, records in order, each list complete, and
// every count (per user, friends; in total, users and edges against the footer). What it does
// not check is that each edge's two copies agree; `relgraph-admin verify` does (O(edges log)).
//
// Thread-safety: a loader is used by one thread.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/graph.h"
#include "storage/snapshot_file.h"
#include "storage/status.h"

namespace relgraph {

// Record tags and sizes; the layout of each record is in docs/snapshot-format.md.
enum class ImageTag : uint32_t { kIds = 1, kFollowing = 2, kFans = 3 };
inline constexpr size_t kImageIdsHeaderBytes = 12;   // tag first count
inline constexpr size_t kImageListHeaderBytes = 16;  // tag user total count
inline constexpr uint32_t kImageIdsPerRecord = 65536;
inline constexpr uint32_t kImageEntriesPerRecord = 65536;

// What Graph::BeginImage sets up (graph.h). Users changed before AppendImageLists reached them
// have their lists as of BeginImage kept in `saved`, already encoded.
struct Graph::ImageCapture {
  // Per user of the image: kLive, kHandedOut, or kSavedBase + k for pre-image saved[k]. A deque,
  // so that saving never moves earlier pre-images: writers save under the exclusive lock, where
  // a vector's or hash map's regrowth was a pause of tens of milliseconds. The states live in
  // chunks allocated on first use, so BeginImage (exclusive too) allocates next to nothing.
  static constexpr uint32_t kLive = 0, kHandedOut = 1, kSavedBase = 2;
  static constexpr size_t kStatesPerChunk = 65536;
  size_t users = 0;
  uint64_t edges = 0;
  std::vector<std::unique_ptr<uint32_t[]>> state_chunks;
  std::deque<std::string> saved;  // emptied when handed out

  uint32_t& State(InternalId x) {
    std::unique_ptr<uint32_t[]>& chunk = state_chunks[x / kStatesPerChunk];
    if (chunk == nullptr) chunk = std::make_unique<uint32_t[]>(kStatesPerChunk);  // zeroed
    return chunk[x % kStatesPerChunk];
  }
};

// The length of the record at the front of `records` (padding included), or 0 when its header
// is cut short, its tag unknown or its length past the end.
size_t ImageRecordBytes(std::string_view records);

// Adds each record of `records` (a concatenation, as AppendImage* produce) to `writer`.
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
  // Builds the id map from every id received, once, before the first list (or at Finish).
  Status IndexIds();
  Status AddFollowing(InternalId user, uint32_t total, uint32_t count, const char* data);
  Status AddFans(InternalId user, uint32_t total, uint32_t count, const char* data);
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
  uint64_t following_edges_ = 0, fan_edges_ = 0;
  uint64_t following_mutual_ = 0, fans_mutual_ = 0;
};

}  // namespace relgraph
