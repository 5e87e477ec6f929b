// Packed list records (version-5 images): every field width round-trips exactly, headers and
// payloads cut short or out of range are refused, and a part's size follows its widths.
#include "engine/graph/packed_list.h"

#include <doctest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace relgraph {
namespace {

std::string Encode(const std::vector<EdgeEntry>& entries, InternalId user = 7, uint32_t total = 0) {
  std::string out;
  AppendPackedList(&out, 4, user, total == 0 ? static_cast<uint32_t>(entries.size()) : total,
                   static_cast<uint32_t>(entries.size()), [&](uint32_t i) { return entries[i]; });
  return out;
}

std::vector<EdgeEntry> Decode(const std::string& record, PackedListHeader* h) {
  REQUIRE(ParsePackedListHeader(record, h));
  REQUIRE(h->record_bytes() == record.size());
  std::vector<EdgeEntry> out(h->count);
  const char* wrong = DecodePackedList(*h, record.data() + h->header_bytes, out.data());
  REQUIRE_MESSAGE(wrong == nullptr, wrong);
  return out;
}

bool Same(const EdgeEntry& a, const EdgeEntry& b) {
  return a.peer == b.peer && EntryTs(a) == EntryTs(b) && EntryMutual(a) == EntryMutual(b);
}

// n entries in time order whose largest delta takes exactly delta_bits bits and whose largest
// peer exactly peer_bits, starting at `first`.
std::vector<EdgeEntry> Run(std::mt19937_64& rng, uint32_t n, unsigned peer_bits,
                           unsigned delta_bits, TimestampMs first) {
  std::vector<EdgeEntry> v;
  TimestampMs ts = first;
  const uint64_t peer_max = peer_bits == 0 ? 0 : (uint64_t{1} << peer_bits) - 1;
  const uint64_t delta_max = delta_bits == 0 ? 0 : (uint64_t{1} << delta_bits) - 1;
  for (uint32_t i = 0; i < n; ++i) {
    if (i > 0) {
      const uint64_t d = i == 1 ? delta_max : (delta_max == 0 ? 0 : rng() % (delta_max + 1));
      ts = std::min<TimestampMs>(kMaxTimestampMs, ts + static_cast<TimestampMs>(d));
    }
    const auto peer = static_cast<InternalId>(i == 0 ? peer_max : rng() % (peer_max + 1));
    v.push_back(MakeEntry(peer, ts, rng() % 2 == 0));
  }
  return v;
}

TEST_CASE("packed_list: every peer width and every delta width round-trips exactly") {
  std::mt19937_64 rng(1);
  for (unsigned peer_bits = 0; peer_bits <= 32; ++peer_bits) {
    for (unsigned delta_bits = 0; delta_bits <= 42; delta_bits += (peer_bits % 3 == 0 ? 1 : 7)) {
      CAPTURE(peer_bits);
      CAPTURE(delta_bits);
      const uint32_t n = 1 + static_cast<uint32_t>(rng() % 40);
      const TimestampMs first = delta_bits == 42 ? 0 : static_cast<TimestampMs>(rng() % (1 << 20));
      const std::vector<EdgeEntry> in = Run(rng, n, peer_bits, delta_bits, first);
      const std::string record = Encode(in);
      PackedListHeader h;
      const std::vector<EdgeEntry> out = Decode(record, &h);
      CHECK(h.peer_bits == (n == 1 && peer_bits == 0 ? 0 : peer_bits));
      if (n > 1) CHECK(h.delta_bits == delta_bits);
      CHECK(h.payload_bits() == uint64_t{n} * (h.peer_bits + 1) + uint64_t{n - 1} * h.delta_bits);
      for (uint32_t i = 0; i < n; ++i) REQUIRE(Same(in[i], out[i]));
    }
  }
}

TEST_CASE("packed_list: the extremes: ids at the 32-bit limit, times 0 and kMaxTimestampMs, ties") {
  std::vector<EdgeEntry> in = {MakeEntry(0xFFFFFFFE, 0, true), MakeEntry(0, 0, false),
                               MakeEntry(0xFFFFFFFD, kMaxTimestampMs, true),
                               MakeEntry(5, kMaxTimestampMs, true)};
  PackedListHeader h;
  const std::vector<EdgeEntry> out = Decode(Encode(in, 0xFFFFFFF0, 1u << 31), &h);
  CHECK(h.user == 0xFFFFFFF0);
  CHECK(h.total == 1u << 31);
  CHECK(h.peer_bits == 32);
  CHECK(h.delta_bits == 42);
  for (size_t i = 0; i < in.size(); ++i) CHECK(Same(in[i], out[i]));
}

TEST_CASE("packed_list: a long part round-trips, and dense times take few bits an entry") {
  std::mt19937_64 rng(2);
  // 65,536 entries (a whole part) a few ms apart, peers below 2^20: 20 + 1 + at most 4 bits.
  std::vector<EdgeEntry> in;
  TimestampMs ts = 1'700'000'000'000;
  for (uint32_t i = 0; i < 65'536; ++i) {
    ts += static_cast<TimestampMs>(rng() % 16);
    in.push_back(MakeEntry(static_cast<InternalId>(rng() % (1 << 20)), ts, rng() % 4 == 0));
  }
  const std::string record = Encode(in);
  CHECK(record.size() < 65'536 * 26 / 8 + 32);
  PackedListHeader h;
  const std::vector<EdgeEntry> out = Decode(record, &h);
  for (size_t i = 0; i < in.size(); ++i) REQUIRE(Same(in[i], out[i]));
}

TEST_CASE(
    "packed_list: headers cut short are not parsed; bad widths, times and padding are named") {
  std::mt19937_64 rng(3);
  const std::string record = Encode(Run(rng, 9, 17, 30, 1'000));
  PackedListHeader h;
  REQUIRE(ParsePackedListHeader(record, &h));
  for (size_t n = 0; n < h.header_bytes; ++n) {
    PackedListHeader cut;
    CHECK_FALSE(ParsePackedListHeader(std::string_view(record).substr(0, n), &cut));
  }
  std::vector<EdgeEntry> out(h.count);
  auto wrong = [&](PackedListHeader bad, const std::string& payload) -> std::string {
    std::string padded = payload;
    padded.resize(std::max<size_t>(padded.size(), bad.payload_bytes()), '\0');
    out.resize(bad.count);
    const char* w = DecodePackedList(bad, padded.data(), out.data());
    return w == nullptr ? "" : w;
  };
  const std::string payload = record.substr(h.header_bytes);
  CHECK(wrong(h, payload).empty());
  PackedListHeader wide = h;
  wide.peer_bits = 33;
  CHECK(wrong(wide, payload).find("peer width") != std::string::npos);
  wide = h;
  wide.delta_bits = 43;
  CHECK(wrong(wide, payload).find("delta width") != std::string::npos);
  PackedListHeader late = h;
  late.first_ts = static_cast<uint64_t>(kMaxTimestampMs) + 1;
  CHECK(wrong(late, payload).find("42-bit") != std::string::npos);
  late.first_ts = static_cast<uint64_t>(kMaxTimestampMs) - 5;  // the deltas carry it past
  CHECK(wrong(late, payload).find("42-bit") != std::string::npos);
  if ((h.payload_bits() & 7) != 0) {
    std::string dirty = payload;
    dirty.back() = static_cast<char>(dirty.back() | 0x80);
    CHECK(wrong(h, dirty).find("padding") != std::string::npos);
  }
}

TEST_CASE("packed_list: random records and random damage never read out of bounds") {
  // Run under the sanitizers: whatever a header says, decoding stays within payload_bytes().
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 2'000; ++trial) {
    std::string record =
        Encode(Run(rng, 1 + static_cast<uint32_t>(rng() % 30), static_cast<unsigned>(rng() % 33),
                   static_cast<unsigned>(rng() % 43), 0));
    record[rng() % record.size()] ^= static_cast<char>(1 << (rng() % 8));
    PackedListHeader h;
    if (!ParsePackedListHeader(record, &h) || h.record_bytes() > record.size()) continue;
    if (h.count > 100'000) continue;
    std::vector<EdgeEntry> out(h.count);
    DecodePackedList(h, record.data() + h.header_bytes, out.data());
  }
}

}  // namespace
}  // namespace relgraph
