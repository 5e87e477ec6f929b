// The slow-command log's ring against a reference model: bounded, newest first, reset, ids
// growing, the threshold's edge, reconfiguration.
#include "net/server/slow_log.h"

#include <doctest.h>

#include <deque>
#include <random>

namespace relgraph::net {
namespace {

SlowlogEntry EntryOf(uint64_t us, const std::string& command = "follow") {
  SlowlogEntry e;
  e.duration_us = us;
  e.command = command;
  e.args = "1 2 -";
  e.client = "127.0.0.1:1";
  return e;
}

TEST_CASE("slow log: the threshold is inclusive, 0 keeps every command, -1 none") {
  SlowLog at(500, 8);
  CHECK_FALSE(at.Wants(499'999));
  CHECK(at.Wants(500'000));
  CHECK(at.Wants(10'000'000));
  SlowLog all(0, 8);
  CHECK(all.Wants(0));
  SlowLog off(kSlowLogOff, 8);
  CHECK_FALSE(off.Wants(0));
  CHECK_FALSE(off.Wants(uint64_t{1} << 62));
}

TEST_CASE("slow log: bounded, newest first, ids growing across a reset, count and reset") {
  std::vector<SlowlogEntry> seen;
  SlowLog log(0, 3, [&](const SlowlogEntry& e) { seen.push_back(e); });
  for (uint64_t i = 1; i <= 5; ++i) log.Add(EntryOf(i));
  SlowlogReply r = log.Read(0, false);
  CHECK(r.threshold_us == 0);
  CHECK(r.max_len == 3);
  REQUIRE(r.entries.size() == 3);
  CHECK(r.entries[0].id == 5);
  CHECK(r.entries[0].duration_us == 5);
  CHECK(r.entries[2].id == 3);
  CHECK(seen.size() == 5);
  CHECK(seen.back().id == 5);  // on_entry sees the id it got
  REQUIRE(log.Read(2, false).entries.size() == 2);
  CHECK(log.Read(2, false).entries[1].id == 4);
  CHECK(log.Read(9, true).entries.size() == 3);  // more than it holds: all, then emptied
  CHECK(log.Read(0, false).entries.empty());
  log.Add(EntryOf(7));
  r = log.Read(0, false);
  REQUIRE(r.entries.size() == 1);
  CHECK(r.entries[0].id == 6);  // a reset does not restart the ids
  CHECK(log.total() == 6);
}

TEST_CASE("slow log: reconfiguring shortens the ring from its oldest end") {
  SlowLog log(100, 4);
  for (uint64_t i = 1; i <= 4; ++i) log.Add(EntryOf(100 + i));
  log.Configure(kSlowLogOff, 2);
  SlowlogReply r = log.Read(0, false);
  CHECK(r.threshold_us == kSlowLogOff);
  CHECK(r.max_len == 2);
  REQUIRE(r.entries.size() == 2);
  CHECK(r.entries[0].id == 4);
  CHECK(r.entries[1].id == 3);
  CHECK_FALSE(log.Wants(1'000'000'000));
  log.Configure(0, 0);  // a length of 0 keeps nothing, yet counts
  log.Add(EntryOf(1));
  CHECK(log.Read(0, false).entries.empty());
  CHECK(log.total() == 5);
}

TEST_CASE("slow log: random adds, reads and resets agree with a reference model") {
  std::mt19937_64 rng(46);
  SlowLog log(0, 16);
  std::deque<SlowlogEntry> model;  // newest first
  uint32_t max_len = 16;
  uint64_t next_id = 1;
  for (int step = 0; step < 5000; ++step) {
    const int what = static_cast<int>(rng() % 10);
    if (what < 6) {
      SlowlogEntry e = EntryOf(rng() % 1000, std::to_string(step));
      log.Add(e);
      e.id = next_id++;
      if (max_len > 0) {
        model.push_front(e);
        if (model.size() > max_len) model.pop_back();
      }
    } else if (what < 9) {
      const auto count = static_cast<uint16_t>(rng() % 20);
      const bool reset = rng() % 4 == 0;
      const SlowlogReply r = log.Read(count, reset);
      const size_t n = count == 0 ? model.size() : std::min<size_t>(count, model.size());
      REQUIRE(r.entries.size() == n);
      for (size_t i = 0; i < n; ++i) CHECK(r.entries[i] == model[i]);
      if (reset) model.clear();
    } else {
      max_len = static_cast<uint32_t>(rng() % 24);
      log.Configure(0, max_len);
      while (model.size() > max_len) model.pop_back();
    }
  }
}

}  // namespace
}  // namespace relgraph::net
