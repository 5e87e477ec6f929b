// Embeds the engine: opens (or recovers) a data directory, follows, reads a count back.
// Usage: relgraph-embed-example DATA_DIR
#include <cstdio>

#include "engine/db.h"

int main(int argc, char** argv) {
  auto db = relgraph::Db::Open(argc > 1 ? argv[1] : "./data", relgraph::DbOptions{});
  if (!db.ok()) return std::fprintf(stderr, "%s\n", db.status().ToString().c_str()), 1;
  if (auto f = (*db)->Follow(1, 2); !f.ok()) return std::puts(f.status().ToString().c_str()), 1;
  auto counts = (*db)->Read([](const relgraph::Graph& g) { return g.GetCounts(2); });
  std::printf("user 2 has %u fans\n", counts.ok() ? counts->fans : 0);
  return 0;
}
