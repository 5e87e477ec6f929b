#include "engine/graph/entry_array.h"

#include <algorithm>
#include <cstring>

#include "engine/graph/id_map.h"  // EntryOrder reads external ids

namespace relgraph {

void EntryArray::Resize(uint32_t new_size, SlabAllocator& slab) {
  const uint32_t old_cap = size_ == 0 ? 0 : SlabAllocator::CapacityFor(size_);
  const uint32_t new_cap = new_size == 0 ? 0 : SlabAllocator::CapacityFor(new_size);
  if (old_cap != new_cap) {
    EdgeEntry* block = new_size == 0 ? nullptr : slab.Allocate(new_size);
    if (data_ != nullptr) {
      if (block != nullptr) {
        std::memcpy(static_cast<void*>(block), data_,
                    std::min(size_, new_size) * sizeof(EdgeEntry));
      }
      slab.Free(data_, size_);
    }
    data_ = block;
  }
  size_ = new_size;
}

void EntryArray::Insert(const EdgeEntry& e, const EntryOrder& order, SlabAllocator& slab) {
  // Most inserts are the newest entry: check the back before searching.
  size_t pos = size_;
  if (size_ > 0 && !order.Less(data_[size_ - 1], order.KeyOf(e))) pos = Rank(order.KeyOf(e), order);
  InsertAt(pos, e, slab);
}

void EntryArray::InsertAt(size_t pos, const EdgeEntry& e, SlabAllocator& slab) {
  const uint32_t old_size = size_;
  Resize(size_ + 1, slab);
  std::memmove(static_cast<void*>(data_ + pos + 1), data_ + pos,
               (old_size - pos) * sizeof(EdgeEntry));
  data_[pos] = e;
}

void EntryArray::EraseAt(size_t pos, SlabAllocator& slab) {
  std::memmove(static_cast<void*>(data_ + pos), data_ + pos + 1,
               (size_ - pos - 1) * sizeof(EdgeEntry));
  Resize(size_ - 1, slab);
}

void EntryArray::AppendRun(const EdgeEntry* src, uint32_t n, SlabAllocator& slab) {
  if (n == 0) return;
  const uint32_t old_size = size_;
  Resize(size_ + n, slab);
  std::memcpy(static_cast<void*>(data_ + old_size), src, n * sizeof(EdgeEntry));
}

void EntryArray::Clear(SlabAllocator& slab) {
  Resize(0, slab);
}

uint32_t EntryArray::CopyDescending(size_t end, uint32_t limit, EdgeEntry* out) const {
  return CopyRunDescending(data_, end, limit, out);
}

}  // namespace relgraph
