// Graph images: the follow graph in the engine's own layout, as the graph blocks of a
// version-3 to 5 snapshot (docs/snapshot-format.md, "Graph image"). Graph::BeginImage and
// AppendImage* (graph.h) produce the records; this header holds their tags and sizes and the
// copy-on-write capture behind BeginImage. GraphImageLoader (engine/durable/graph_image_loader.h)
// turns records back into a Graph.
//
// Why this design: a snapshot of external-id edge lists makes recovery hash every id again and
// rebuild every fan list by sorting (2.8 s at 10M edges). An image holds the external id of
// each internal id, and both lists of every user in their memory order (internal ids, kMutual
// bits, key order), so loading is one hash insert per user plus a pass over each list. Because
// both directions are stored, the image must be one point in time; graph.h says how it stays
// one while writes go on. The graph hands out its lists as copies of its arrays (the version-4
// records), which is all it does under the engine's lock and in a writer's copy-on-write save;
// AddImageRecords (engine/durable/graph_image_loader.h) packs them (version 5,
// engine/graph/packed_list.h) on the snapshot's own thread, outside the lock.
//
// Thread-safety: as Graph's (graph.h): the capture is touched only under exclusive access.
#pragma once

#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/graph/graph.h"
#include "storage/status.h"

namespace relgraph {

// Record tags and sizes; the layout of each record is in docs/snapshot-format.md.
// Versions 3 and 4 write kIds, kFollowing and kFans, each tag a u32; version 5 writes kIds and
// the packed lists, whose tag is one byte. Every record's first byte is its tag.
enum class ImageTag : uint32_t {
  kIds = 1,
  kFollowing = 2,
  kFans = 3,
  kPackedFollowing = 4,
  kPackedFans = 5,
  kTimeUnit = 6,  // u32 tag; the image's times are in this many ms (absent: 1)
};
inline constexpr size_t kImageIdsHeaderBytes = 12;   // tag first count
inline constexpr size_t kImageListHeaderBytes = 16;  // tag user total count
inline constexpr size_t kImageTimeUnitBytes = 12;    // tag unit_ms zero
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

// Entry i of a version-3/4 list record of `count` entries whose entries start at `data`
// (kFollowing: three arrays; kFans: 10-byte entries), read whatever the alignment.
inline EdgeEntry RawListEntry(ImageTag tag, const char* data, uint32_t count, uint32_t i) {
  EdgeEntry e;
  if (tag == ImageTag::kFollowing) {
    std::memcpy(&e.peer, data + 4 * size_t{i}, 4);
    std::memcpy(&e.ts_lo, data + 4 * size_t{count} + 4 * size_t{i}, 4);
    std::memcpy(&e.ts_hi_flags, data + 8 * size_t{count} + 2 * size_t{i}, 2);
  } else {
    std::memcpy(static_cast<void*>(&e), data + sizeof(EdgeEntry) * size_t{i}, sizeof(EdgeEntry));
  }
  return e;
}

// Appends the packed form (version 5, engine/graph/packed_list.h) of a version-4 list record
// `raw` (kFollowing or kFans, as AppendImageLists produces it) to *out.
void PackListRecord(std::string_view raw, std::string* out);

}  // namespace relgraph
