// Saving a diverged tail: the records a node holds that its new primary never had (an old
// primary's writes logged after the group moved on, never acknowledged by the group's rule),
// copied aside before the node discards them to follow (docs/replication.md, "Automatic
// failover"). Never silently dropped: the file and the LSN range are logged.
//
// File `<data dir>/diverged/diverged-<from>-<to>.records`:
//   "relgraph-diverged-records 1\n", then per record: lsn:u64 type:u8 length:u16 payload,
//   little-endian, the record as logged (docs/wal-format.md, "Record types").
//
// Thread-safety: call from one thread; the Db may be serving meanwhile.
#pragma once

#include <cstdint>
#include <string>

#include "engine/db.h"
#include "storage/status.h"

namespace relgraph {

struct SavedTail {
  std::string path;  // empty when there was nothing to save
  uint64_t from_lsn = 0, to_lsn = 0, records = 0;
};

// Copies records from_lsn..newest of `db`'s WAL to a new file (fsynced) under its directory.
// An error when the WAL no longer holds from_lsn or the file cannot be written: then the
// caller must not discard them.
Result<SavedTail> SaveDivergedTail(Db* db, uint64_t from_lsn);

}  // namespace relgraph
