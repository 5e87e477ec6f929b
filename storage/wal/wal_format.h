// The WAL's byte format, as specified in docs/wal-format.md (keep the two in step):
//
//   segment := header record*
//   header  := magic:u8[8] version:u32 segment_no:u64 first_lsn:u64 header_sum:u64   (36 bytes)
//              magic = "RGWAL\0\0\1", version = 2 (1 is read too), header_sum = XXH3_64bits(magic
//              .. first_lsn)
//   record  := sum:u64 len:u32 lsn:u64 type:u8 payload:u8[len]                         (21 + len)
//              sum = XXH3_64bits(len .. payload), len <= kMaxRecordPayload
//
// Integers are little-endian. Record types are owned by the engine (storage/ stores bytes).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace relgraph {

inline constexpr char kWalMagic[8] = {'R', 'G', 'W', 'A', 'L', '\0', '\0', '\1'};
// The version written. Version 2 changed only record payloads (the engine's, see
// engine/durable/wal_records.h), so the framing reads both.
inline constexpr uint32_t kWalVersion = 2;
inline constexpr uint32_t kWalOldestReadableVersion = 1;
inline constexpr size_t kWalHeaderBytes = 36;
inline constexpr size_t kWalRecordHeaderBytes = 21;
inline constexpr uint32_t kMaxRecordPayload = 1 << 20;

struct WalSegmentHeader {
  uint64_t segment_no = 0;
  uint64_t first_lsn = 0;
};

void EncodeWalHeader(const WalSegmentHeader& h, std::string* out);
// false when the bytes are not a valid header (wrong magic, unknown version or checksum).
bool DecodeWalHeader(std::string_view in, WalSegmentHeader* h);

void EncodeWalRecord(uint64_t lsn, uint8_t type, std::string_view payload, std::string* out);

}  // namespace relgraph
