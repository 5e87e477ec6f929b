#include "engine/graph/packed_list.h"

namespace relgraph {
namespace {

static_assert(std::endian::native == std::endian::little, "fields are read as little-endian words");

// Reads bit fields from a payload of `bytes` bytes, low bits first; never reads past it.
class BitReader {
 public:
  BitReader(const char* data, uint64_t bytes) : data_(data), bytes_(bytes) {}
  // The `bits` bits from bit `bit`. REQUIRES: bits <= 56 and the field lies within the
  // payload.
  uint64_t At(uint64_t bit, unsigned bits) const {
    const uint64_t byte = bit >> 3;
    uint64_t word = 0;
    if (bytes_ - byte >= 8) [[likely]] {
      std::memcpy(&word, data_ + byte, 8);  // one load
    } else {
      std::memcpy(&word, data_ + byte, static_cast<size_t>(bytes_ - byte));
    }
    return (word >> (bit & 7)) & ((uint64_t{1} << bits) - 1);
  }

 private:
  const char* data_;
  uint64_t bytes_;
};

}  // namespace

bool ParsePackedListHeader(std::string_view record, PackedListHeader* h) {
  Decoder d(record);
  if (!d.U8(&h->tag) || !d.Varint32(&h->user) || !d.Varint32(&h->total) || !d.Varint32(&h->count) ||
      !d.Varint64(&h->first_ts) || !d.U8(&h->peer_bits) || !d.U8(&h->delta_bits)) {
    return false;
  }
  h->header_bytes = record.size() - d.remaining();
  return true;
}

const char* DecodePackedList(const PackedListHeader& h, const char* payload, EdgeEntry* out) {
  if (h.peer_bits > kPackedMaxPeerBits) return "peer width past 32 bits";
  if (h.delta_bits > kPackedMaxDeltaBits) return "time delta width past 42 bits";
  if (h.first_ts > static_cast<uint64_t>(kMaxTimestampMs)) return "time past the 42-bit range";
  // Entry i >= 1 starts at a known bit, so each field is one load that waits on no other
  // (a restart decodes every list this way); only the times add up.
  BitReader bits(payload, h.payload_bytes());
  const unsigned pm_bits = h.peer_bits + 1u;
  const uint64_t width = pm_bits + uint64_t{h.delta_bits};
  const uint64_t peer_mask = (uint64_t{1} << h.peer_bits) - 1;
  if (h.count == 0) return nullptr;
  uint64_t ts = h.first_ts;
  uint64_t pm = bits.At(0, pm_bits);
  out[0] = MakeEntry(static_cast<InternalId>(pm & peer_mask), static_cast<TimestampMs>(ts),
                     (pm >> h.peer_bits) != 0);
  uint64_t bit = pm_bits;
  // A time past kMaxTimestampMs; steps are below 2^42, so the sum passes it before it wraps.
  bool past = false;
  for (uint32_t i = 1; i < h.count; ++i, bit += width) {
    pm = bits.At(bit, pm_bits);
    ts += bits.At(bit + pm_bits, h.delta_bits);
    past |= ts > static_cast<uint64_t>(kMaxTimestampMs);
    out[i] = MakeEntry(static_cast<InternalId>(pm & peer_mask), static_cast<TimestampMs>(ts),
                       (pm >> h.peer_bits) != 0);
  }
  if (past) return "time past the 42-bit range";
  const uint64_t end = bit;
  if ((end & 7) != 0 && (static_cast<uint8_t>(payload[end >> 3]) >> (end & 7)) != 0)
    return "padding bits set";
  return nullptr;
}

}  // namespace relgraph
