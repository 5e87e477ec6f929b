// Graph images: the follow graph in the engine's own layout, as the graph blocks of a
// version-3 snapshot (docs/snapshot-format.md, "Graph image"). Graph::BeginImage and
// AppendImage* (graph.h) produce the records; this header holds their tags and sizes and the
// copy-on-write capture behind BeginImage. GraphImageLoader (engine/durable/graph_image_loader.h)
// turns records back into a Graph.
//
// Why this design: a snapshot of external-id edge lists makes recovery hash every id again and
// rebuild every fan list by sorting (2.8 s at 10M edges). An image holds the external id of
// each internal id, and both lists of every user as they sit in memory (internal ids, kMutual
// bits, key order), so loading is one hash insert per user plus sequential copies. Because both
// directions are stored, the image must be one point in time; graph.h says how it stays one
// while writes go on.
//
// Thread-safety: as Graph's (graph.h): the capture is touched only under exclusive access.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/graph/graph.h"
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

}  // namespace relgraph
