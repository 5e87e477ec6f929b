#include "engine/mem/block_pool.h"

#include <doctest.h>

#include <cstring>
#include <random>
#include <vector>

namespace relgraph {
namespace {

TEST_CASE("block pool: capacity classes are monotone, cover every size and keep slack bounded") {
  for (const auto growth : {BlockPool::Growth::kFewCopies, BlockPool::Growth::kTight}) {
    const BlockPool pool(16, growth);
    uint32_t prev = 0;
    for (uint32_t n = 1; n <= BlockPool::kMaxBlockEntries; ++n) {
      const uint32_t cap = pool.CapacityFor(n);
      REQUIRE(cap >= n);
      REQUIRE(cap >= prev);
      REQUIRE(cap <= BlockPool::kMaxBlockEntries);
      if (n >= 8) REQUIRE(cap <= n * 3 / 2 + 1);
      // Tight: past 12, at most about a tenth unused.
      if (growth == BlockPool::Growth::kTight && n > 12) REQUIRE(cap * 10 <= n * 11 + 10);
      prev = cap;
    }
  }
  CHECK(BlockPool(16).CapacityFor(33) == 40);  // few copies: the old ladder
  CHECK(BlockPool(16, BlockPool::Growth::kTight).GrownPastBlocks(64) == 72);
  CHECK(BlockPool(16).GrownPastBlocks(64) == 96);
}

// A block handed out, stamped in every byte so an overlap shows.
struct Held {
  char* block;
  uint32_t n;
  size_t bytes;  // the block's capacity in bytes
  uint8_t stamp;
};

void Stamp(const Held& h) {
  std::memset(h.block, h.stamp, h.bytes);
}

// True when every byte of the block still holds its stamp.
bool AllBytesAre(const char* block, size_t bytes, uint8_t stamp) {
  for (size_t i = 0; i < bytes; ++i) {
    if (static_cast<uint8_t>(block[i]) != stamp) return false;
  }
  return true;
}

void CheckStamp(const Held& h) {
  REQUIRE(AllBytesAre(h.block, h.bytes, h.stamp));
}

TEST_CASE("block pool: blocks never overlap, are aligned, and live bytes are counted") {
  for (const size_t entry : {size_t{8}, size_t{12}, size_t{16}, size_t{32}}) {
    const bool tight = entry % 8 != 0;  // both ladders, across the entry sizes
    BlockPool pool(entry, tight ? BlockPool::Growth::kTight : BlockPool::Growth::kFewCopies);
    std::mt19937 rng(static_cast<uint32_t>(entry));
    std::vector<Held> held;
    size_t live = 0;
    for (uint32_t i = 0; i < 60'000; ++i) {
      if (!held.empty() && rng() % 5 < 2) {
        const size_t k = rng() % held.size();
        CheckStamp(held[k]);
        pool.FreeBlock(held[k].block, held[k].n);
        live -= held[k].bytes;
        held[k] = held.back();
        held.pop_back();
      } else {
        const uint32_t n = 1 + rng() % BlockPool::kMaxBlockEntries;
        Held h{static_cast<char*>(pool.AllocateBlock(n)), n, pool.CapacityFor(n) * entry,
               static_cast<uint8_t>(i)};
        REQUIRE(reinterpret_cast<uintptr_t>(h.block) % (entry % 8 == 0 ? 8 : 4) == 0);
        Stamp(h);
        held.push_back(h);
        live += h.bytes;
      }
      REQUIRE(pool.LiveBytes() == live);
    }
    for (const Held& h : held) {
      CheckStamp(h);
      pool.FreeBlock(h.block, h.n);
    }
    CHECK(pool.LiveBytes() == 0);
    CHECK(pool.FreeRuns() * BlockPool::kRunBytes <= pool.MemoryBytes());
  }
}

// The point of the pool: runs emptied by one class serve another.
TEST_CASE("block pool: a class's freed runs serve other classes") {
  BlockPool pool(16);
  std::vector<void*> small;
  for (int i = 0; i < 20'000; ++i) small.push_back(pool.AllocateBlock(3));  // 940 KiB
  const size_t reserved = pool.MemoryBytes();
  for (void* b : small) pool.FreeBlock(b, 3);
  CHECK(pool.FreeRuns() >= 20'000 * 48 / BlockPool::kRunBytes);
  std::vector<void*> large;
  for (int i = 0; i < 900; ++i) large.push_back(pool.AllocateBlock(64));  // 900 KiB
  CHECK(pool.MemoryBytes() == reserved);
  for (void* b : large) pool.FreeBlock(b, 64);
}

// Buffers growing one entry at a time, in random order, as authors' rings do while posts
// arrive: every growth step frees a block of a smaller class. The bytes reserved stay close
// to the bytes in use, where per-class free lists would keep every class's peak.
TEST_CASE("block pool: buffers growing together leave little memory behind") {
  constexpr size_t kEntry = 16;
  constexpr uint32_t kBuffers = 20'000;
  BlockPool pool(kEntry);
  std::mt19937 rng(7);
  std::vector<uint32_t> size(kBuffers, 0);
  std::vector<char*> block(kBuffers, nullptr);
  std::vector<uint32_t> growing(kBuffers);
  for (uint32_t i = 0; i < kBuffers; ++i) growing[i] = i;
  size_t peak_reserved = 0, peak_live = 0;
  while (!growing.empty()) {
    const size_t k = rng() % growing.size();
    const uint32_t b = growing[k];
    const uint32_t n = size[b] + 1;
    if (size[b] == 0 || pool.CapacityFor(n) != pool.CapacityFor(size[b])) {
      char* fresh = static_cast<char*>(pool.AllocateBlock(n));
      if (size[b] > 0) {
        std::memcpy(fresh, block[b], size[b] * kEntry);
        pool.FreeBlock(block[b], size[b]);
      }
      block[b] = fresh;
    }
    std::memset(block[b] + size[b] * kEntry, static_cast<int>(b), kEntry);
    size[b] = n;
    if (n == BlockPool::kMaxBlockEntries) {
      growing[k] = growing.back();
      growing.pop_back();
    }
    peak_reserved = std::max(peak_reserved, pool.MemoryBytes());
    peak_live = std::max(peak_live, pool.LiveBytes());
  }
  for (uint32_t b = 0; b < kBuffers; ++b)
    REQUIRE(AllBytesAre(block[b], size[b] * kEntry, static_cast<uint8_t>(b)));
  MESSAGE("live " << pool.LiveBytes() << " B, reserved " << pool.MemoryBytes() << " B, peak "
                  << peak_reserved << " B");
  CHECK(pool.LiveBytes() == kBuffers * 64 * kEntry);
  CHECK(peak_reserved <= peak_live + peak_live / 4 + (size_t{4} << 20));
  for (uint32_t b = 0; b < kBuffers; ++b) pool.FreeBlock(block[b], size[b]);
}

}  // namespace
}  // namespace relgraph
