#include "storage/wal/wal_format.h"

#include <xxhash.h>

#include <cstring>

#include "storage/coding.h"

namespace relgraph {

void EncodeWalHeader(const WalSegmentHeader& h, std::string* out) {
  const size_t start = out->size();
  out->append(kWalMagic, sizeof kWalMagic);
  PutFixed32(out, kWalVersion);
  PutFixed64(out, h.segment_no);
  PutFixed64(out, h.first_lsn);
  PutFixed64(out, XXH3_64bits(out->data() + start, out->size() - start));
}

bool DecodeWalHeader(std::string_view in, WalSegmentHeader* h) {
  if (in.size() < kWalHeaderBytes) return false;
  if (std::memcmp(in.data(), kWalMagic, sizeof kWalMagic) != 0) return false;
  const uint32_t version = DecodeFixed32(in.data() + 8);
  if (version < kWalOldestReadableVersion || version > kWalVersion) return false;
  if (DecodeFixed64(in.data() + 28) != XXH3_64bits(in.data(), 28)) return false;
  h->segment_no = DecodeFixed64(in.data() + 12);
  h->first_lsn = DecodeFixed64(in.data() + 20);
  return true;
}

void EncodeWalRecord(uint64_t lsn, uint8_t type, std::string_view payload, std::string* out) {
  // One resize and plain stores: a busy WAL encodes millions of small records a second.
  const size_t start = out->size();
  out->resize(start + kWalRecordHeaderBytes + payload.size());
  char* const p = out->data() + start;
  EncodeFixed32(p + 8, static_cast<uint32_t>(payload.size()));
  EncodeFixed64(p + 12, lsn);
  p[20] = static_cast<char>(type);
  if (!payload.empty()) std::memcpy(p + kWalRecordHeaderBytes, payload.data(), payload.size());
  EncodeFixed64(p, XXH3_64bits(p + 8, kWalRecordHeaderBytes - 8 + payload.size()));
}

}  // namespace relgraph
