#include "engine/graph/graph_image.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "engine/graph/packed_list.h"
#include "storage/coding.h"

namespace relgraph {
namespace {

static_assert(std::endian::native == std::endian::little,
              "version-4 records copy the in-memory arrays as the file's little-endian bytes");

size_t Pad4(size_t n) {
  return (n + 3) & ~size_t{3};
}

void PutListHeader(std::string* out, ImageTag tag, InternalId user, uint32_t total,
                   uint32_t count) {
  PutFixed32(out, static_cast<uint32_t>(tag));
  PutFixed32(out, user);
  PutFixed32(out, total);
  PutFixed32(out, count);
}

// Bytes of the list records that carry a run of n entries (parts of at most
// kImageEntriesPerRecord, each with its header and padding).
size_t ListRecordsBytes(uint32_t n) {
  size_t bytes = 0;
  for (uint32_t at = 0; at < n; at += kImageEntriesPerRecord)
    bytes += kImageListHeaderBytes + Pad4(10 * size_t{std::min(kImageEntriesPerRecord, n - at)});
  return bytes;
}

void PadTo4(std::string* out) {
  out->resize(Pad4(out->size()), '\0');
}

}  // namespace

size_t ImageRecordBytes(std::string_view records) {
  if (records.empty()) return 0;
  const auto tag = static_cast<ImageTag>(static_cast<uint8_t>(records[0]));
  uint64_t bytes = 0;
  if (tag == ImageTag::kPackedFollowing || tag == ImageTag::kPackedFans) {
    PackedListHeader h;
    if (!ParsePackedListHeader(records, &h)) return 0;
    bytes = h.record_bytes();
  } else {
    // The u32 tags of versions 3 and 4.
    if (records.size() < kImageIdsHeaderBytes) return 0;
    if (DecodeFixed32(records.data()) != static_cast<uint32_t>(tag)) return 0;
    if (tag == ImageTag::kIds) {
      bytes = kImageIdsHeaderBytes + 8 * uint64_t{DecodeFixed32(records.data() + 8)};
    } else if (tag == ImageTag::kTimeUnit) {
      bytes = kImageTimeUnitBytes;
    } else if (tag == ImageTag::kFollowing || tag == ImageTag::kFans) {
      if (records.size() < kImageListHeaderBytes) return 0;
      bytes = kImageListHeaderBytes + Pad4(10 * size_t{DecodeFixed32(records.data() + 12)});
    } else {
      return 0;
    }
  }
  return bytes <= records.size() ? static_cast<size_t>(bytes) : 0;
}

void PackListRecord(std::string_view raw, std::string* out) {
  const auto tag = static_cast<ImageTag>(DecodeFixed32(raw.data()));
  const InternalId user = DecodeFixed32(raw.data() + 4);
  const uint32_t total = DecodeFixed32(raw.data() + 8);
  const uint32_t count = DecodeFixed32(raw.data() + 12);
  const char* data = raw.data() + kImageListHeaderBytes;
  const auto packed =
      tag == ImageTag::kFollowing ? ImageTag::kPackedFollowing : ImageTag::kPackedFans;
  AppendPackedList(out, static_cast<uint8_t>(packed), user, total, count,
                   [&](uint32_t i) { return RawListEntry(tag, data, count, i); });
}

// ---- Graph: producing images --------------------------------------------------------------------

void Graph::BeginImage() {
  image_ = std::make_unique<ImageCapture>();
  image_->users = users_.size();
  image_->edges = edge_count_;
  image_->state_chunks.resize((image_->users + ImageCapture::kStatesPerChunk - 1) /
                              ImageCapture::kStatesPerChunk);
}

void Graph::EndImage() {
  image_.reset();
}

size_t Graph::image_users() const {
  return image_ != nullptr ? image_->users : users_.size();
}

uint64_t Graph::image_edges() const {
  return image_ != nullptr ? image_->edges : edge_count_;
}

void Graph::SaveForImage(InternalId x) {
  if (x >= image_->users) return;
  uint32_t& state = image_->State(x);
  if (state != ImageCapture::kLive) return;
  state = ImageCapture::kSavedBase + static_cast<uint32_t>(image_->saved.size());
  AppendUserImage(x, &image_->saved.emplace_back());
}

void Graph::AppendUserImage(InternalId x, std::string* out) const {
  const UserRecord& u = users_[x];
  const uint32_t following = u.following.size();
  // Grow once: a celebrity's fan list is megabytes, and doubling steps would copy it again.
  size_t bytes = ListRecordsBytes(following);
  u.fans.ForEachRun([&](const EdgeEntry*, uint32_t size) { bytes += ListRecordsBytes(size); });
  if (out->capacity() < out->size() + bytes)
    out->reserve(std::max(out->size() + bytes, 2 * out->capacity()));
  // The record's three arrays, from the list decoded once.
  thread_local std::vector<EdgeEntry> entries;
  entries.resize(following);
  u.following.Decode(entries.data());
  for (uint32_t at = 0; at < following; at += kImageEntriesPerRecord) {
    const uint32_t n = std::min(kImageEntriesPerRecord, following - at);
    PutListHeader(out, ImageTag::kFollowing, x, following, n);
    const size_t arrays = out->size();
    out->resize(arrays + 10 * size_t{n});
    char* peers = out->data() + arrays;
    char* lo = peers + 4 * size_t{n};
    char* hi = lo + 4 * size_t{n};
    for (uint32_t i = 0; i < n; ++i) {
      const EdgeEntry& e = entries[at + i];
      std::memcpy(peers + 4 * size_t{i}, &e.peer, 4);
      std::memcpy(lo + 4 * size_t{i}, &e.ts_lo, 4);
      std::memcpy(hi + 2 * size_t{i}, &e.ts_hi_flags, 2);
    }
    PadTo4(out);
  }
  const uint32_t fans = u.fans.size();
  u.fans.ForEachRun([&](const EdgeEntry* run, uint32_t size) {
    for (uint32_t at = 0; at < size; at += kImageEntriesPerRecord) {
      const uint32_t n = std::min(kImageEntriesPerRecord, size - at);
      PutListHeader(out, ImageTag::kFans, x, fans, n);
      out->append(reinterpret_cast<const char*>(run + at), sizeof(EdgeEntry) * size_t{n});
      PadTo4(out);
    }
  });
}

void Graph::AppendImageIds(size_t begin, size_t end, std::string* out) const {
  if (begin == 0 && !time_.exact()) {  // first, so that a loader knows before any list
    PutFixed32(out, static_cast<uint32_t>(ImageTag::kTimeUnit));
    PutFixed32(out, time_.unit_ms());
    PutFixed32(out, 0);
  }
  end = std::min(end, image_users());
  for (size_t at = begin; at < end; at += kImageIdsPerRecord) {
    const auto n = static_cast<uint32_t>(std::min<size_t>(kImageIdsPerRecord, end - at));
    PutFixed32(out, static_cast<uint32_t>(ImageTag::kIds));
    PutFixed32(out, static_cast<uint32_t>(at));
    PutFixed32(out, n);
    const size_t start = out->size();
    out->resize(start + 8 * size_t{n});
    char* p = out->data() + start;
    for (uint32_t i = 0; i < n; ++i, p += 8)
      EncodeFixed64(p, ids_.External(static_cast<InternalId>(at + i)));
  }
}

size_t Graph::AppendImageLists(size_t begin, size_t end, uint64_t max_entries,
                               std::string* out) const {
  end = std::min(end, image_users());
  uint64_t entries = 0;
  size_t x = begin;
  for (; x < end; ++x) {
    const auto id = static_cast<InternalId>(x);
    const uint64_t size = uint64_t{users_[x].following.size()} + users_[x].fans.size();
    if (x > begin && entries + size > max_entries) break;
    entries += size;
    if (image_ == nullptr) {
      AppendUserImage(id, out);
      continue;
    }
    uint32_t& state = image_->State(id);
    if (state >= ImageCapture::kSavedBase) {
      std::string& saved = image_->saved[state - ImageCapture::kSavedBase];
      out->append(saved);
      std::string().swap(saved);
    } else if (state == ImageCapture::kLive) {
      AppendUserImage(id, out);
    }
    state = ImageCapture::kHandedOut;
  }
  return x;
}

}  // namespace relgraph
