// PackBlockAddress / UnpackBlockAddress (engine/mem/packed_address.h): real addresses of every
// kind relgraph packs round-trip, and the packed value stays within its 45 bits.
#include "engine/mem/packed_address.h"

#include <doctest.h>

#include <memory>
#include <vector>

#include "engine/graph/slab_allocator.h"

namespace relgraph {
namespace {

void RoundTrips(const void* p) {
  const uint64_t packed = PackBlockAddress(p);
  CHECK((packed & ~kPackedAddressMask) == 0);
  CHECK(UnpackBlockAddress(packed) == static_cast<const char*>(p));
  // Bits above the address (a size, a flag) do not change what it unpacks to.
  CHECK(UnpackBlockAddress(packed | ~kPackedAddressMask) == static_cast<const char*>(p));
}

TEST_CASE("packed address: heap, slab, stack and boundary addresses round-trip") {
  auto heap = std::make_unique<uint32_t[]>(16);
  RoundTrips(heap.get());
  RoundTrips(heap.get() + 7);
  SlabAllocator slab;
  std::vector<EdgeEntry*> blocks;
  for (uint32_t n : {1u, 2u, 3u, 7u, 100u, 1024u, 5000u}) blocks.push_back(slab.Allocate(n));
  for (EdgeEntry* b : blocks) RoundTrips(b);
  uint32_t on_stack = 0;
  RoundTrips(&on_stack);
  RoundTrips(reinterpret_cast<const void*>((uintptr_t{1} << 47) - 4));  // the highest
  CHECK(PackBlockAddress(nullptr) == 0);
  CHECK(UnpackBlockAddress(0) == nullptr);
  const uint32_t sizes[] = {1u, 2u, 3u, 7u, 100u, 1024u, 5000u};
  for (size_t i = 0; i < blocks.size(); ++i) slab.Free(blocks[i], sizes[i]);
}

}  // namespace
}  // namespace relgraph
