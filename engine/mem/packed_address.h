// The address of a 4-byte aligned block in 45 bits, so that a list handle can keep its size
// beside it in one 64-bit word (FollowingList, FanList: the user record is 20 bytes, not 28).
//
// Why this is safe: Linux hands user space addresses below 2^47 on x86-64 (and below 2^48 on
// AArch64 with 48-bit virtual addresses, where only mappings asked for above 2^47 land
// higher; relgraph asks for none). Every block relgraph packs is 4-byte aligned (slab blocks,
// operator new), so its low two bits are zero. PackBlockAddress aborts, naming the address,
// for one that does not fit: a silent truncation would corrupt the graph.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace relgraph {

inline constexpr int kPackedAddressBits = 45;
inline constexpr uint64_t kPackedAddressMask = (uint64_t{1} << kPackedAddressBits) - 1;

inline uint64_t PackBlockAddress(const void* block) {
  const auto address = reinterpret_cast<uintptr_t>(block);
  if ((address & 3) != 0 || (address >> (kPackedAddressBits + 2)) != 0) [[unlikely]] {
    std::fprintf(stderr, "relgraph: block address %p is not 4-byte aligned below 2^47\n", block);
    std::abort();
  }
  return address >> 2;
}

inline char* UnpackBlockAddress(uint64_t packed) {
  return reinterpret_cast<char*>(static_cast<uintptr_t>(packed & kPackedAddressMask) << 2);
}

}  // namespace relgraph
