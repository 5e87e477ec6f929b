#include "engine/durable/graph_image_loader.h"

#include <algorithm>
#include <cstring>

#include "engine/graph/packed_list.h"
#include "storage/coding.h"

namespace relgraph {

Status AddImageRecords(std::string_view records, SnapshotWriter* writer) {
  std::string packed;
  while (!records.empty()) {
    const size_t n = ImageRecordBytes(records);
    if (n == 0) return Status(Code::kInternal, "malformed image record from the graph");
    const std::string_view record = records.substr(0, n);
    records.remove_prefix(n);
    const auto tag = static_cast<ImageTag>(static_cast<uint8_t>(record[0]));
    if (tag != ImageTag::kFollowing && tag != ImageTag::kFans) {
      RELGRAPH_RETURN_IF_ERROR(writer->AddImageRecord(record));
      continue;
    }
    packed.clear();
    PackListRecord(record, &packed);
    RELGRAPH_RETURN_IF_ERROR(writer->AddImageRecord(packed));
  }
  return Status::OK();
}

// ---- GraphImageLoader
// -----------------------------------------------------------------------------

GraphImageLoader::GraphImageLoader(const GraphOptions& options)
    : graph_(std::make_unique<Graph>(options)) {}

GraphImageLoader::~GraphImageLoader() {
  if (indexer_.joinable()) indexer_.join();
}

Status GraphImageLoader::Corrupt(const std::string& what) const {
  return Status::Corruption("snapshot image: " + what);
}

Status GraphImageLoader::Begin(uint64_t users, uint64_t edges) {
  if (users >= kNoInternalId) return Corrupt("claims " + std::to_string(users) + " users");
  if (users > graph_->options().max_users) {
    return Status(Code::kResourceExhausted, "the snapshot holds " + std::to_string(users) +
                                                " users, more than this graph may (max_users " +
                                                std::to_string(graph_->options().max_users) + ")");
  }
  want_users_ = users;
  want_edges_ = edges;
  externals_.reserve(users);
  graph_->PrefaultEdges(edges);
  begun_ = true;
  return Status::OK();
}

Status GraphImageLoader::AddBlock(std::string_view raw) {
  if (!begun_) return Status(Code::kInternal, "GraphImageLoader::Begin was not called");
  const size_t block_bytes = raw.size();
  while (!raw.empty()) {
    const auto tag = static_cast<ImageTag>(static_cast<uint8_t>(raw[0]));
    // A packed record's header is parsed once, here; the others are sized by their kind.
    PackedListHeader packed;
    const bool is_packed = tag == ImageTag::kPackedFollowing || tag == ImageTag::kPackedFans;
    size_t n = 0;
    if (!is_packed) {
      n = ImageRecordBytes(raw);
    } else if (ParsePackedListHeader(raw, &packed) && packed.record_bytes() <= raw.size()) {
      n = static_cast<size_t>(packed.record_bytes());
    }
    if (n == 0) {
      return Corrupt("record cut short or of an unknown kind at byte " +
                     std::to_string(block_bytes - raw.size()) + " of a block");
    }
    const std::string_view record = raw.substr(0, n);
    raw.remove_prefix(n);
    if (is_packed) {
      RELGRAPH_RETURN_IF_ERROR(AddPacked(packed, record.data() + packed.header_bytes));
    } else if (tag == ImageTag::kIds) {
      RELGRAPH_RETURN_IF_ERROR(AddIds(record));
    } else if (tag == ImageTag::kTimeUnit) {
      RELGRAPH_RETURN_IF_ERROR(AddTimeUnit(record));
    } else {
      RELGRAPH_RETURN_IF_ERROR(AddRaw(tag, record));
    }
  }
  return Status::OK();
}

Status GraphImageLoader::AddRaw(ImageTag kind, std::string_view record) {
  const InternalId user = DecodeFixed32(record.data() + 4);
  const uint32_t total = DecodeFixed32(record.data() + 8);
  const uint32_t count = DecodeFixed32(record.data() + 12);
  RELGRAPH_RETURN_IF_ERROR(EnterList(user, kind, total, count));
  // Version 3 and 4 files are read once, on the upgrade's first start: through a copy, so
  // that both kinds of record take one path.
  const char* data = record.data() + kImageListHeaderBytes;
  if (unpacked_.size() < count) unpacked_.resize(count);
  for (uint32_t i = 0; i < count; ++i) unpacked_[i] = RawListEntry(kind, data, count, i);
  return kind == ImageTag::kFollowing ? AddFollowing(user, total, count, unpacked_.data())
                                      : AddFans(user, total, count, unpacked_.data());
}

Status GraphImageLoader::AddPacked(const PackedListHeader& h, const char* payload) {
  const ImageTag kind = h.tag == static_cast<uint8_t>(ImageTag::kPackedFollowing)
                            ? ImageTag::kFollowing
                            : ImageTag::kFans;
  RELGRAPH_RETURN_IF_ERROR(EnterList(h.user, kind, h.total, h.count));
  if (h.count > kImageEntriesPerRecord) {  // the writer's bound; it also bounds unpacked_
    return Corrupt("list part of " + std::to_string(h.count) + " entries for internal id " +
                   std::to_string(h.user) + ", more than " +
                   std::to_string(kImageEntriesPerRecord));
  }
  if (unpacked_.size() < h.count) unpacked_.resize(h.count);
  if (const char* wrong = DecodePackedList(h, payload, unpacked_.data())) {
    return Corrupt(std::string(kind == ImageTag::kFollowing ? "following" : "fans") +
                   " record of internal id " + std::to_string(h.user) + ": " + wrong);
  }
  return kind == ImageTag::kFollowing ? AddFollowing(h.user, h.total, h.count, unpacked_.data())
                                      : AddFans(h.user, h.total, h.count, unpacked_.data());
}

Status GraphImageLoader::AddIds(std::string_view record) {
  const uint32_t first = DecodeFixed32(record.data() + 4);
  const uint32_t count = DecodeFixed32(record.data() + 8);
  if (ids_indexed_) return Corrupt("user ids after the lists");
  if (first != externals_.size()) {
    return Corrupt("user id record starts at internal id " + std::to_string(first) + ", expected " +
                   std::to_string(externals_.size()));
  }
  if (uint64_t{first} + count > want_users_) return Corrupt("more user ids than the footer says");
  const char* p = record.data() + kImageIdsHeaderBytes;
  for (uint32_t i = 0; i < count; ++i) externals_.push_back(DecodeFixed64(p + 8 * size_t{i}));
  return Status::OK();
}

Status GraphImageLoader::AddTimeUnit(std::string_view record) {
  if (ids_indexed_ || !externals_.empty()) return Corrupt("time unit after the user ids");
  image_unit_ms_ = DecodeFixed32(record.data() + 4);
  if (image_unit_ms_ != 1 && image_unit_ms_ != 1000) {
    return Corrupt("time unit of " + std::to_string(image_unit_ms_) + " ms");
  }
  return Status::OK();
}

Status GraphImageLoader::IndexIds() {
  if (ids_indexed_) return Status::OK();
  if (const uint32_t mine = graph_->time().unit_ms(); image_unit_ms_ != mine) {
    // Not corruption: the node was started with another --follow-time-resolution.
    return Status(Code::kUnsupported,
                  "the snapshot keeps follow times at " + TimeResolutionName(image_unit_ms_) +
                      ", this node at " + TimeResolutionName(mine) + " (--follow-time-resolution=" +
                      TimeResolutionName(mine) + "): start it with --follow-time-resolution=" +
                      TimeResolutionName(image_unit_ms_) + ", the data directory's resolution");
  }
  ids_indexed_ = true;
  Graph& g = *graph_;
  if (externals_.size() != want_users_) {
    return Corrupt(std::to_string(externals_.size()) + " user ids, the footer says " +
                   std::to_string(want_users_));
  }
  const size_t zero = g.ids_.AppendAll(externals_);
  if (zero < externals_.size()) return Corrupt("user id 0 at internal id " + std::to_string(zero));
  // Lists need only External() (for ties), so the hash index is built on another core
  // meanwhile; Finish joins it and reports a repeated id.
  indexer_ = std::thread([this] { repeated_id_ = graph_->ids_.IndexAll(); });
  std::vector<UserId>().swap(externals_);
  return Status::OK();
}

Status GraphImageLoader::EnterList(InternalId user, ImageTag kind, uint32_t total, uint32_t count) {
  RELGRAPH_RETURN_IF_ERROR(IndexIds());  // the first list: every id must be in
  if (user >= want_users_) return Corrupt("list of internal id " + std::to_string(user));
  if (count == 0) return Corrupt("empty list record for internal id " + std::to_string(user));
  const bool continues = user == user_ && kind == kind_ && filled_ < total_;
  if (continues) {
    if (total != total_ || count > total_ - filled_) {
      return Corrupt("list parts of internal id " + std::to_string(user) + " disagree on length");
    }
    return Status::OK();
  }
  if (filled_ != total_) {
    return Corrupt("list of internal id " + std::to_string(user_) + " ends after " +
                   std::to_string(filled_) + " of " + std::to_string(total_) + " entries");
  }
  const bool after = user_ == kNoInternalId || user > user_ || (user == user_ && kind > kind_);
  if (!after) return Corrupt("lists out of order at internal id " + std::to_string(user));
  if (count > total) {
    return Corrupt("list part longer than its list, internal id " + std::to_string(user));
  }
  if (kind == ImageTag::kFollowing && total > FollowingList::kMaxSize) {
    return Corrupt("following list of " + std::to_string(total) + " entries for internal id " +
                   std::to_string(user) + ", more than a list holds (" +
                   std::to_string(FollowingList::kMaxSize) + ")");
  }
  user_ = user;
  kind_ = kind;
  total_ = total;
  filled_ = 0;
  prev_ = {-1, 0};
  mutual_ = 0;
  return Status::OK();
}

template <typename Get>
bool GraphImageLoader::RunIsValid(InternalId user, uint32_t n, Get get, EntryKey* prev,
                                  uint32_t* mutual) const {
  constexpr uint16_t kUnusedBits = static_cast<uint16_t>(~(kTsHiMask | kMutualFlag));
  const IdMap& ids = graph_->ids_;
  bool ok = true;
  uint32_t m = 0;
  TimestampMs prev_ts = prev->ts;
  auto prev_peer = static_cast<InternalId>(prev->user);
  for (uint32_t i = 0; i < n; ++i) {
    const EdgeEntry e = get(i);
    const bool in_range = e.peer < want_users_;
    ok &= in_range & (e.peer != user) & ((e.ts_hi_flags & kUnusedBits) == 0);
    const TimestampMs ts = EntryTs(e);
    if (ts <= prev_ts) {  // the external ids decide a tie (rare); range first, it indexes
      ok &= ts == prev_ts && in_range && ids.External(e.peer) > ids.External(prev_peer);
    }
    m += e.ts_hi_flags >> 15;
    prev_ts = ts;
    prev_peer = e.peer;
  }
  if (!ok) return false;
  *prev = {prev_ts, prev_peer};
  *mutual += m;
  return true;
}

template <typename Get>
Status GraphImageLoader::NameBadEntry(InternalId user, const char* what, uint32_t n, Get get,
                                      const EntryKey& prev) const {
  // Validity of a prefix is monotone in its length: bisect for the longest valid one.
  uint32_t lo = 0, hi = n;  // the prefix of lo entries is valid; of hi, not
  while (hi - lo > 1) {
    const uint32_t mid = lo + (hi - lo) / 2;
    EntryKey p = prev;
    uint32_t m = 0;
    (RunIsValid(user, mid, get, &p, &m) ? lo : hi) = mid;
  }
  // Entry lo alone, after nothing, fails only on its own fields; else it is out of order.
  EntryKey none{-1, 0};
  uint32_t m = 0;
  auto alone = [&](uint32_t) { return get(lo); };
  if (!RunIsValid(user, 1, alone, &none, &m)) {
    return Corrupt(std::string(what) + " entry " + std::to_string(lo) + " of internal id " +
                   std::to_string(user) + " names internal id " + std::to_string(get(lo).peer) +
                   " or has unused bits set");
  }
  return Corrupt(std::string(what) + " of internal id " + std::to_string(user) +
                 " out of order at entry " + std::to_string(lo));
}

Status GraphImageLoader::AddFollowing(InternalId user, uint32_t total, uint32_t count,
                                      const EdgeEntry* entries) {
  Graph& g = *graph_;
  auto get = [entries](uint32_t i) { return entries[i]; };
  if (!RunIsValid(user, count, get, &prev_, &mutual_))
    return NameBadEntry(user, "following", count, get, prev_);
  g.users_[user].following.AppendRun(entries, count, g.slab_);
  filled_ += count;
  following_edges_ += count;
  if (filled_ == total) {
    g.users_[user].friends = mutual_;
    following_mutual_ += mutual_;
  }
  return Status::OK();
}

Status GraphImageLoader::AddFans(InternalId user, uint32_t total, uint32_t count,
                                 const EdgeEntry* entries) {
  Graph& g = *graph_;
  auto get = [entries](uint32_t i) { return entries[i]; };
  if (!RunIsValid(user, count, get, &prev_, &mutual_))
    return NameBadEntry(user, "fans", count, get, prev_);
  filled_ += count;
  fan_edges_ += count;
  const FanContext ctx = g.fan_context();
  if (count == total) {
    g.ChangeFans(g.users_[user].fans,
                 [&] { g.users_[user].fans.BuildFromSorted(entries, count, ctx); });
  } else {
    fan_parts_.insert(fan_parts_.end(), entries, entries + count);
    if (filled_ < total) return Status::OK();
    g.ChangeFans(g.users_[user].fans,
                 [&] { g.users_[user].fans.BuildFromSorted(fan_parts_.data(), total, ctx); });
    fan_parts_.clear();
  }
  fans_mutual_ += mutual_;
  if (mutual_ != g.users_[user].friends) {
    return Corrupt("internal id " + std::to_string(user) + " has " + std::to_string(mutual_) +
                   " mutual fans but " + std::to_string(g.users_[user].friends) +
                   " mutual follows");
  }
  return Status::OK();
}

Result<std::unique_ptr<Graph>> GraphImageLoader::Finish() {
  if (!begun_) return Status(Code::kInternal, "GraphImageLoader::Begin was not called");
  Graph& g = *graph_;
  g.EndPrefaultEdges();
  if (filled_ != total_) {
    return Corrupt("the last list, of internal id " + std::to_string(user_) + ", is incomplete");
  }
  RELGRAPH_RETURN_IF_ERROR(IndexIds());
  if (!indexer_.joinable()) return Corrupt("the user ids were refused earlier");
  indexer_.join();
  if (repeated_id_ < g.ids_.size()) {
    return Corrupt("user " +
                   std::to_string(g.ids_.External(static_cast<InternalId>(repeated_id_))) +
                   " has two internal ids");
  }
  if (following_edges_ != want_edges_ || fan_edges_ != want_edges_) {
    return Corrupt(std::to_string(following_edges_) + " following and " +
                   std::to_string(fan_edges_) + " fan entries, the footer says " +
                   std::to_string(want_edges_) + " edges");
  }
  // Per user, mutual fans were checked against friends; users without fans are caught here.
  if (following_mutual_ != fans_mutual_) {
    return Corrupt(std::to_string(following_mutual_) + " mutual follows but " +
                   std::to_string(fans_mutual_) + " mutual fans");
  }
  g.edge_count_ = want_edges_;
  return std::move(graph_);
}

}  // namespace relgraph
