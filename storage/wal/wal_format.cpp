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
  const size_t start = out->size();
  PutFixed64(out, 0);  // checksum, filled below
  PutFixed32(out, static_cast<uint32_t>(payload.size()));
  PutFixed64(out, lsn);
  out->push_back(static_cast<char>(type));
  out->append(payload);
  const uint64_t sum = XXH3_64bits(out->data() + start + 8, out->size() - start - 8);
  for (int i = 0; i < 8; ++i) (*out)[start + i] = static_cast<char>(sum >> (8 * i));
}

}  // namespace relgraph
