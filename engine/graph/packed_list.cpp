#include "engine/graph/packed_list.h"

namespace relgraph {
namespace {

static_assert(std::endian::native == std::endian::little, "fields are read as little-endian words");

// Reads bit fields from a payload of `bytes` bytes, low bits first; never reads past it.
class BitReader {
 public:
  BitReader(const char* data, uint64_t bytes) : data_(data), bytes_(bytes) {}
  // REQUIRES: bits <= 56 and the field lies within the payload.
  uint64_t Get(unsigned bits) {
    const uint64_t byte = pos_ >> 3;
    uint64_t word = 0;
    if (bytes_ - byte >= 8) [[likely]] {
      std::memcpy(&word, data_ + byte, 8);  // one load
    } else {
      std::memcpy(&word, data_ + byte, static_cast<size_t>(bytes_ - byte));
    }
    const uint64_t v = (word >> (pos_ & 7)) & ((uint64_t{1} << bits) - 1);
    pos_ += bits;
    return v;
  }
  uint64_t position() const { return pos_; }

 private:
  const char* data_;
  uint64_t bytes_;
  uint64_t pos_ = 0;
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
  BitReader bits(payload, h.payload_bytes());
  const uint64_t peer_mask = (uint64_t{1} << h.peer_bits) - 1;
  auto ts = static_cast<TimestampMs>(h.first_ts);
  for (uint32_t i = 0; i < h.count; ++i) {
    const uint64_t pm = bits.Get(h.peer_bits + 1u);
    if (i > 0) ts += static_cast<TimestampMs>(bits.Get(h.delta_bits));
    if (ts > kMaxTimestampMs) return "time past the 42-bit range";
    out[i] = MakeEntry(static_cast<InternalId>(pm & peer_mask), ts, (pm >> h.peer_bits) != 0);
  }
  const uint64_t end = bits.position();
  if ((end & 7) != 0 && (static_cast<uint8_t>(payload[end >> 3]) >> (end & 7)) != 0)
    return "padding bits set";
  return nullptr;
}

}  // namespace relgraph
