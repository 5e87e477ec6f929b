#include "engine/feed/inbox_buffer.h"

namespace relgraph {

uint32_t InboxBuffer::FirstAtOrAfter(TimestampMs ts) const {
  return PartitionPoint(0, size(), [&](const InboxEntry& x) { return x.ts() < ts; });
}

}  // namespace relgraph
