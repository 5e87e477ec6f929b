#include <doctest.h>

#include <set>

#include "storage/status.h"

namespace relgraph {
namespace {

TEST_CASE("status: ok by default, errors carry code, message and detail") {
  CHECK(Status().ok());
  CHECK(Status().ToString() == "ok");
  Status s(Code::kRateLimited, "slow down", 250);
  CHECK_FALSE(s.ok());
  CHECK(s.retry_after_ms() == 250);
  CHECK(s.ToString() == "rate_limited: slow down");
  CHECK(Status::NotFound("x").retry_after_ms() == 0);
}

TEST_CASE("status: every code has a distinct name") {
  std::set<std::string_view> names;
  for (int c = 0; c <= kMaxCode; ++c) {
    names.insert(CodeName(static_cast<Code>(c)));
  }
  CHECK(names.size() == size_t{kMaxCode} + 1);
  CHECK(names.count("unknown") == 0);
}

TEST_CASE("result: holds a value or the status that explains its absence") {
  Result<int> v(7);
  CHECK(v.ok());
  CHECK(*v == 7);
  CHECK(v.status().ok());
  Result<int> e(Status::InvalidArgument("bad"));
  CHECK_FALSE(e.ok());
  CHECK(e.status().code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace relgraph
