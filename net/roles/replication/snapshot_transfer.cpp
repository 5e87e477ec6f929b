#include "net/roles/replication/snapshot_transfer.h"

#include <algorithm>

#include "storage/coding.h"

namespace relgraph {

Result<size_t> SnapshotTransfer::Next(size_t max_body, std::string* body) {
  // offset:u64, then as many of the file's bytes as the frame holds (256 KiB at most: the
  // connection's low-water mark paces the rest).
  const size_t n = static_cast<size_t>(
      std::min<uint64_t>({snapshot_.file_bytes - offset_, max_body - net::kSnapshotDataHeaderBytes,
                          size_t{256} << 10}));
  const size_t start = body->size();
  body->resize(start + net::kSnapshotDataHeaderBytes + n);
  EncodeFixed64(body->data() + start, offset_);
  if (Status s = snapshot_.file->ReadAt(offset_, n, body->data() + start + 8); !s.ok()) {
    body->resize(start);
    return s;
  }
  offset_ += n;
  return n;
}

}  // namespace relgraph
