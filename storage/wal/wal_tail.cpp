#include "storage/wal/wal_tail.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "storage/coding.h"
#include "storage/env/file_names.h"
#include "storage/wal/wal_format.h"

namespace relgraph {

namespace {

constexpr size_t kReadChunk = size_t{256} << 10;  // bytes asked of the file per refill

}  // namespace

WalTail::WalTail(Env* env, std::string dir, uint64_t from_lsn)
    : env_(env), dir_(std::move(dir)), next_lsn_(from_lsn) {}

WalTail::~WalTail() = default;

Status LsnExpired(uint64_t lsn, uint64_t oldest, std::string_view how) {
  return Status(Code::kLsnExpired,
                "LSN " + std::to_string(lsn) + " is no longer in the WAL" + std::string(how) +
                    "; the oldest kept is " + std::to_string(oldest),
                static_cast<int64_t>(oldest));
}

Result<std::unique_ptr<WalTail>> WalTail::Open(Env* env, const std::string& dir, uint64_t from_lsn,
                                               uint64_t* oldest_lsn) {
  if (from_lsn == 0) return Status::InvalidArgument("LSNs start at 1");
  auto segments = ListWalSegments(env, dir);
  if (!segments.ok()) return segments.status();
  if (segments->empty()) return Status::NotFound("no WAL segment in " + dir);
  // The newest segment that starts at or before from_lsn. Headers are read newest first: a
  // tail usually starts near the end.
  for (size_t i = segments->size(); i-- > 0;) {
    auto header = ReadWalSegmentHeader(env, dir, (*segments)[i]);
    if (!header.ok()) {
      // The newest segment may have just been created, its header not written yet.
      if (i + 1 == segments->size()) continue;
      return header.status();
    }
    if (header->first_lsn > from_lsn) {
      if (i == 0) {
        if (oldest_lsn != nullptr) *oldest_lsn = header->first_lsn;
        return LsnExpired(from_lsn, header->first_lsn);
      }
      continue;
    }
    std::unique_ptr<WalTail> tail(new WalTail(env, dir, header->first_lsn));
    RELGRAPH_RETURN_IF_ERROR(tail->OpenSegment((*segments)[i]));
    // Skip to from_lsn.
    while (tail->next_lsn_ < from_lsn) {
      auto n = tail->Read(from_lsn - 1, from_lsn - tail->next_lsn_,
                          [](const WalRecordView&) { return Status::OK(); });
      if (!n.ok()) return n.status();
      if (*n == 0) break;  // from_lsn is past what is written: the tail waits there
    }
    if (tail->next_lsn_ < from_lsn) {
      return Status(Code::kInvalidArgument, "LSN " + std::to_string(from_lsn) +
                                                " is past the end of the WAL (next is " +
                                                std::to_string(tail->next_lsn_) + ")");
    }
    return tail;
  }
  return Status::NotFound("no readable WAL segment in " + dir);
}

Status WalTail::OpenSegment(uint64_t segment_no) {
  path_ = JoinPath(dir_, WalSegmentName(segment_no));
  auto f = env_->OpenRandomAccess(path_);
  if (!f.ok()) return f.status();
  file_ = std::move(*f);
  segment_no_ = segment_no;
  pos_ = kWalHeaderBytes;
  buf_len_ = 0;
  buf_offset_ = pos_;
  return Status::OK();
}

Status WalTail::Damage(const std::string& what) const {
  return Status::Corruption(path_ + " at offset " + std::to_string(pos_) + " (LSN " +
                            std::to_string(next_lsn_) + "): " + what);
}

Result<bool> WalTail::Fill(size_t n) {
  if (pos_ + n <= buf_offset_ + buf_len_) return true;
  // Keep the bytes from pos_ on at the front, then read more after them. The storage only
  // grows, so a tail polling at the end of the WAL allocates and clears nothing.
  const size_t keep = static_cast<size_t>(buf_offset_ + buf_len_ - pos_);
  std::memmove(buf_.data(), buf_.data() + (pos_ - buf_offset_), keep);
  buf_offset_ = pos_;
  buf_len_ = keep;
  if (buf_.size() < std::max(n, kReadChunk)) buf_.resize(std::max(n, kReadChunk));
  auto got =
      file_->ReadUpTo(buf_offset_ + buf_len_, buf_.size() - buf_len_, buf_.data() + buf_len_);
  if (!got.ok()) return got.status();
  buf_len_ += *got;
  return buf_len_ >= n;
}

Result<bool> WalTail::NextSegment() {
  const std::string next = JoinPath(dir_, WalSegmentName(segment_no_ + 1));
  if (!env_->Exists(next)) {
    // Retention deletes oldest first: with this segment gone too, the next may have been
    // deleted before the tail reached it, and a newer one is where the WAL goes on.
    if (env_->Exists(path_)) return false;
    auto segments = ListWalSegments(env_, dir_);
    if (!segments.ok()) return segments.status();
    if (!segments->empty() && segments->back() > segment_no_ + 1) {
      auto oldest = ReadWalSegmentHeader(env_, dir_, segments->front());
      const uint64_t oldest_lsn = oldest.ok() ? oldest->first_lsn : 0;
      return LsnExpired(next_lsn_, oldest_lsn, " (retention deleted it)");
    }
    return false;
  }
  auto header = ReadWalSegmentHeader(env_, dir_, segment_no_ + 1);
  if (!header.ok()) return false;  // created, its header not written yet
  if (header->first_lsn != next_lsn_) {
    return Damage("the next segment starts at LSN " + std::to_string(header->first_lsn) +
                  ", expected " + std::to_string(next_lsn_));
  }
  // The writer opens the next segment only after writing this one whole: whatever this one
  // still shows past pos_ (a record cut off) is damage.
  auto more = Fill(1);
  if (!more.ok()) return more.status();
  if (*more) return Damage("bytes after the last record of a finished segment");
  RELGRAPH_RETURN_IF_ERROR(OpenSegment(segment_no_ + 1));
  return true;
}

Result<size_t> WalTail::Read(uint64_t up_to, size_t max_records,
                             const std::function<Status(const WalRecordView&)>& fn) {
  size_t delivered = 0;
  while (delivered < max_records && next_lsn_ <= up_to) {
    // A record is whole in the file, or on its way: then the next segment, if it exists,
    // says this one is finished, and a part of a record left in it is damage.
    auto header = Fill(kWalRecordHeaderBytes);
    if (!header.ok()) return header.status();
    const uint32_t len = *header ? DecodeFixed32(buf_.data() + (pos_ - buf_offset_) + 8) : 0;
    if (len > kMaxRecordPayload)
      return Damage("record length " + std::to_string(len) + " over the limit");
    auto whole = *header ? Fill(kWalRecordHeaderBytes + len) : Result<bool>(false);
    if (!whole.ok()) return whole.status();
    if (!*whole) {
      auto moved = NextSegment();
      if (!moved.ok()) return moved.status();
      if (*moved) continue;
      break;
    }
    const char* p = buf_.data() + (pos_ - buf_offset_);
    if (DecodeFixed64(p) != XXH3_64bits(p + 8, 13 + len)) return Damage("record checksum mismatch");
    const uint64_t lsn = DecodeFixed64(p + 12);
    if (lsn != next_lsn_) return Damage("record has LSN " + std::to_string(lsn));
    const WalRecordView rec{lsn, static_cast<uint8_t>(p[20]), std::string_view(p + 21, len)};
    RELGRAPH_RETURN_IF_ERROR(fn(rec));
    ++delivered;
    ++next_lsn_;
    pos_ += kWalRecordHeaderBytes + len;
  }
  return delivered;
}

}  // namespace relgraph
