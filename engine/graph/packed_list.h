// Packed lists: one part of a following or fan list in a version-5 graph image
// (docs/snapshot-format.md, "Packed lists"), its entries bit-packed at the widths the part
// needs.
//
// Why this design: a version-4 image copied the lists' 10-byte entries and 16-byte headers as
// they sit in memory, 22.7 bytes per edge after lz4, which the random ids and times barely
// shrink. Within a list the times only grow, so each entry after the first carries its time's
// distance from the one before, in as many bits as the part's largest distance needs; peers
// take as many bits as the part's largest internal id, kMutual one bit, and the header is
// varints. Fields are fixed-width within a part, so decoding is a shift and a mask per field
// and loading stays a pass over the bytes (no join, no sort).
//
// Record layout:
//   packed := tag:u8  user:varint  total:varint  count:varint  first_ts:varint
//             peer_bits:u8  delta_bits:u8  payload
//   payload := entry 0: peer:peer_bits mutual:1; entries 1..count-1: peer mutual delta:delta_bits
//              bit-packed from the low bit of each byte up, zero bits to the byte's end
//   entry i's time = first_ts + the deltas of entries 1..i
//
// Thread-safety: pure functions.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "engine/graph/edge_entry.h"
#include "engine/graph/packed_bits.h"
#include "engine/types.h"
#include "storage/coding.h"

namespace relgraph {

inline constexpr uint32_t kPackedMaxPeerBits = 32;
inline constexpr uint32_t kPackedMaxDeltaBits = 42;  // times are 42-bit (kMaxTimestampMs)

struct PackedListHeader {
  uint8_t tag = 0;
  InternalId user = 0;
  uint32_t total = 0;
  uint32_t count = 0;
  uint64_t first_ts = 0;
  uint8_t peer_bits = 0;
  uint8_t delta_bits = 0;
  size_t header_bytes = 0;

  uint64_t payload_bits() const {
    return count == 0 ? 0 : uint64_t{count} * (peer_bits + 1u) + uint64_t{count - 1} * delta_bits;
  }
  uint64_t payload_bytes() const { return (payload_bits() + 7) / 8; }
  uint64_t record_bytes() const { return header_bytes + payload_bytes(); }
};

// Parses the header at the front of `record`: false when it is cut short or a varint is too
// long for its field. Widths and times are not checked here (DecodePackedList does).
bool ParsePackedListHeader(std::string_view record, PackedListHeader* h);

// Decodes the record's entries into out[0, h.count). `payload` holds h.payload_bytes() bytes.
// Returns nullptr, or what is wrong: a width past its maximum, a time past kMaxTimestampMs,
// padding bits that are not zero.
const char* DecodePackedList(const PackedListHeader& h, const char* payload, EdgeEntry* out);

// Appends one record of the n entries get(0) .. get(n-1), in list order (times never
// decrease). REQUIRES: n >= 1.
template <typename Get>
void AppendPackedList(std::string* out, uint8_t tag, InternalId user, uint32_t total, uint32_t n,
                      Get get);

// ---- implementation ---------------------------------------------------------------------------

template <typename Get>
void AppendPackedList(std::string* out, uint8_t tag, InternalId user, uint32_t total, uint32_t n,
                      Get get) {
  // One pass for the widths, one to pack.
  InternalId max_peer = 0;
  uint64_t max_delta = 0;
  TimestampMs prev = EntryTs(get(0));
  for (uint32_t i = 0; i < n; ++i) {
    const EdgeEntry e = get(i);
    const TimestampMs ts = EntryTs(e);
    max_peer = e.peer > max_peer ? e.peer : max_peer;
    const auto delta = static_cast<uint64_t>(ts - prev);
    max_delta = delta > max_delta ? delta : max_delta;
    prev = ts;
  }
  const auto peer_bits = static_cast<unsigned>(std::bit_width(max_peer));
  const auto delta_bits = static_cast<unsigned>(std::bit_width(max_delta));
  out->push_back(static_cast<char>(tag));
  PutVarint64(out, user);
  PutVarint64(out, total);
  PutVarint64(out, n);
  PutVarint64(out, static_cast<uint64_t>(EntryTs(get(0))));
  out->push_back(static_cast<char>(peer_bits));
  out->push_back(static_cast<char>(delta_bits));
  PackedListHeader h;
  h.count = n;
  h.peer_bits = static_cast<uint8_t>(peer_bits);
  h.delta_bits = static_cast<uint8_t>(delta_bits);
  const size_t start = out->size();
  out->resize(start + h.payload_bytes());  // zeroed: the last byte's unused bits stay 0
  BitSink bits(out->data() + start, 0);
  prev = EntryTs(get(0));
  for (uint32_t i = 0; i < n; ++i) {
    const EdgeEntry e = get(i);
    bits.Put(uint64_t{e.peer} | (uint64_t{EntryMutual(e)} << peer_bits), peer_bits + 1);
    if (i > 0) {
      const TimestampMs ts = EntryTs(e);
      bits.Put(static_cast<uint64_t>(ts - prev), delta_bits);
      prev = ts;
    }
  }
  bits.Flush();
}

}  // namespace relgraph
