// The relational design (docs/comparison.md) on PostgreSQL, through libpq:
//   rel(subject, object, state, follow_ts, fan_ts)   two rows per follow, keyed (subject,
//       object); state bit 0: subject follows object, bit 1: object follows subject
//   counts(uid, following, fans, friends)            kept in the write's transaction
//   posts(post, author, ts), inbox(owner, ts, post)  the feed, pushed at publish
// with partial indexes for the following, fans and friends lists, each ordered by its time.
// Writes are PL/pgSQL functions (one transaction each); every statement is prepared. A batch
// goes out in libpq's pipeline mode with a sync after each operation, so each is its own
// transaction and an error fails only its own operation.
//
// Thread-safety: one instance per thread.
#pragma once

#include <memory>
#include <string>

#include "tools/bench/designs/design.h"

namespace relgraph::bench {

// url: a libpq connection URI (postgres://USER@HOST:PORT/DB). The schema is created by
// BulkLoad; a design connected to a database without it can only be loaded.
Result<std::unique_ptr<Design>> ConnectPostgresDesign(const std::string& url,
                                                      uint32_t max_following);

}  // namespace relgraph::bench
