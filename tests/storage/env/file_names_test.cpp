#include <doctest.h>

#include "storage/env/file_names.h"

namespace relgraph {
namespace {

TEST_CASE("file_names: format and parse round-trip; other names are not ours") {
  FileType t;
  uint64_t n;
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{12345}, UINT64_MAX}) {
    REQUIRE(ParseFileName(WalSegmentName(v), &t, &n));
    CHECK(t == FileType::kWalSegment);
    CHECK(n == v);
    REQUIRE(ParseFileName(SnapshotName(v), &t, &n));
    CHECK(t == FileType::kSnapshot);
    REQUIRE(ParseFileName(SnapshotTempName(v), &t, &n));
    CHECK(t == FileType::kSnapshotTemp);
    CHECK(n == v);
  }
  CHECK(WalSegmentName(7) == "wal-00000000000000000007.log");
  CHECK(WalSegmentName(9) < WalSegmentName(10));  // lexical order is numeric order
  for (const char* junk :
       {"wal-7.log", "wal-0000000000000000000x.log", "snapshot-00000000000000000001.rgs.bak",
        "README", "wal-00000000000000000001.log~", ""}) {
    CHECK_FALSE(ParseFileName(junk, &t, &n));
  }
}

}  // namespace
}  // namespace relgraph
