#include "storage/wal/wal_reader.h"

#include <xxhash.h>

#include <algorithm>

#include "storage/coding.h"
#include "storage/env/file_names.h"
#include "storage/wal/wal_format.h"

namespace relgraph {
namespace {

Status Damage(const std::string& path, uint64_t offset, uint64_t lsn, const std::string& what,
              const std::string& dir, WalDamage* out, uint64_t segment_no) {
  if (out != nullptr) *out = WalDamage{path, segment_no, offset, lsn, what};
  return Status::Corruption(path + " at offset " + std::to_string(offset) + " (LSN " +
                            std::to_string(lsn) + "): " + what +
                            ". Recovery stopped; run `relgraph-admin repair " + dir +
                            "` to keep a backup and truncate at the last good record");
}

}  // namespace

Result<std::vector<uint64_t>> ListWalSegments(Env* env, const std::string& dir) {
  return ListNumberedFiles(env, dir, FileType::kWalSegment);
}

Result<WalSegmentHeader> ReadWalSegmentHeader(Env* env, const std::string& dir,
                                              uint64_t segment_no) {
  const std::string path = JoinPath(dir, WalSegmentName(segment_no));
  auto bytes = env->ReadFilePrefix(path, kWalHeaderBytes);
  if (!bytes.ok()) return bytes.status();
  WalSegmentHeader h;
  if (!DecodeWalHeader(*bytes, &h))
    return Status::Corruption(path + ": bad or short segment header");
  return h;
}

Result<WalScanResult> ScanWal(Env* env, const std::string& dir, const WalScanOptions& options,
                              const std::function<Status(const WalRecordView&)>& fn) {
  auto segments = ListWalSegments(env, dir);
  if (!segments.ok()) return segments.status();
  WalScanResult result;
  uint64_t expected_lsn = 0;  // next LSN; 0 until the first header is read
  for (size_t s = 0; s < segments->size(); ++s) {
    const uint64_t no = (*segments)[s];
    const bool newest = s + 1 == segments->size();
    const std::string path = JoinPath(dir, WalSegmentName(no));
    auto data = env->ReadFile(path);
    if (!data.ok()) return data.status();
    const std::string_view bytes = *data;

    // ---- header
    if (bytes.size() < kWalHeaderBytes) {
      if (!newest)
        return Damage(path, 0, expected_lsn, "segment shorter than its header", dir, options.damage,
                      no);
      // Created but never completed: the writer died at once. Drop the file.
      result.torn_bytes = bytes.size();
      result.torn_file = path;
      if (options.truncate_torn_tail) RELGRAPH_RETURN_IF_ERROR(env->RemoveFile(path));
      break;
    }
    WalSegmentHeader header;
    if (!DecodeWalHeader(bytes, &header)) {
      return Damage(path, 0, expected_lsn, "bad segment header (magic, version or checksum)", dir,
                    options.damage, no);
    }
    if (header.segment_no != no) {
      return Damage(path, 0, expected_lsn,
                    "header names segment " + std::to_string(header.segment_no), dir,
                    options.damage, no);
    }
    if (s > 0 && no != (*segments)[s - 1] + 1) {
      return Damage(path, 0, expected_lsn, "segment " + std::to_string(no - 1) + " is missing", dir,
                    options.damage, no);
    }
    if (expected_lsn == 0) {
      expected_lsn = header.first_lsn;
      result.first_lsn = header.first_lsn;
    } else if (header.first_lsn != expected_lsn) {
      return Damage(path, 0, expected_lsn,
                    "segment starts at LSN " + std::to_string(header.first_lsn) + ", expected " +
                        std::to_string(expected_lsn),
                    dir, options.damage, no);
    }
    ++result.segments;
    result.last_segment_no = no;

    // ---- records
    size_t pos = kWalHeaderBytes;
    while (pos < bytes.size()) {
      const size_t left = bytes.size() - pos;
      const char* p = bytes.data() + pos;
      const uint32_t len = left >= 12 ? DecodeFixed32(p + 8) : 0;
      const bool torn = left < kWalRecordHeaderBytes ||
                        (len <= kMaxRecordPayload && left < kWalRecordHeaderBytes + len);
      if (torn) {
        if (!newest)
          return Damage(path, pos, expected_lsn, "record cut off inside an older segment", dir,
                        options.damage, no);
        result.torn_bytes = left;
        result.torn_file = path;
        if (options.truncate_torn_tail) RELGRAPH_RETURN_IF_ERROR(env->Truncate(path, pos));
        break;
      }
      if (len > kMaxRecordPayload) {
        return Damage(path, pos, expected_lsn,
                      "record length " + std::to_string(len) + " over the limit", dir,
                      options.damage, no);
      }
      if (DecodeFixed64(p) != XXH3_64bits(p + 8, 13 + len)) {
        return Damage(path, pos, expected_lsn, "record checksum mismatch", dir, options.damage, no);
      }
      const uint64_t lsn = DecodeFixed64(p + 12);
      if (lsn != expected_lsn) {
        return Damage(path, pos, expected_lsn, "record has LSN " + std::to_string(lsn), dir,
                      options.damage, no);
      }
      if (lsn >= options.from_lsn) {
        const WalRecordView rec{lsn, static_cast<uint8_t>(p[20]), std::string_view(p + 21, len)};
        if (Status st = fn(rec); !st.ok()) {
          return Status(st.code(), path + " at offset " + std::to_string(pos) + " (LSN " +
                                       std::to_string(lsn) + "): " + st.message());
        }
        ++result.records;
      }
      ++expected_lsn;
      pos += kWalRecordHeaderBytes + len;
    }
  }
  result.last_lsn = expected_lsn == 0 ? 0 : expected_lsn - 1;
  return result;
}

}  // namespace relgraph
