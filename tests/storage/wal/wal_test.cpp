// WAL writer and reader: round trips, damage detection, fault injection, crash simulation.
#include <doctest.h>

#include <random>
#include <string>
#include <thread>
#include <vector>

#include <xxhash.h>

#include "storage/coding.h"
#include "storage/env/fault_injection_env.h"
#include "storage/env/file_names.h"
#include "storage/wal/wal_format.h"
#include "storage/wal/wal_reader.h"
#include "storage/wal/wal_writer.h"
#include "tests/storage/test_dir.h"

namespace relgraph {
namespace {

using testing::TestDir;

struct Rec {
  uint64_t lsn;
  uint8_t type;
  std::string payload;
};

WalWriterOptions Opts(DurabilityMode mode, uint64_t segment_bytes = 4096) {
  WalWriterOptions o;
  o.mode = mode;
  o.segment_bytes = segment_bytes;
  o.buffer_bytes = 1500;
  o.sync_interval = std::chrono::milliseconds(20);
  return o;
}

std::vector<Rec> WriteRecords(Env* env, const std::string& dir, DurabilityMode mode, int n,
                              uint64_t seed, uint64_t segment = 1, uint64_t first_lsn = 1) {
  std::mt19937_64 rng(seed);
  auto w = WalWriter::Open(env, dir, Opts(mode), segment, first_lsn);
  REQUIRE(w.ok());
  std::vector<Rec> recs;
  for (int i = 0; i < n; ++i) {
    std::string payload(rng() % 200, '\0');
    for (char& c : payload) c = static_cast<char>(rng());
    const uint8_t type = static_cast<uint8_t>(1 + rng() % 3);
    auto lsn = (*w)->Append(type, payload);
    REQUIRE(lsn.ok());
    REQUIRE((*w)->Commit(*lsn).ok());
    recs.push_back({*lsn, type, payload});
    // Regular writes make segments roll over in every mode (the background writer batches).
    if (i % 10 == 9) REQUIRE((*w)->Flush(/*sync=*/false).ok());
  }
  REQUIRE((*w)->Close().ok());
  return recs;
}

Result<WalScanResult> Scan(Env* env, const std::string& dir, std::vector<Rec>* out,
                           WalScanOptions options = {}) {
  return ScanWal(env, dir, options, [&](const WalRecordView& r) {
    out->push_back({r.lsn, r.type, std::string(r.payload)});
    return Status::OK();
  });
}

bool Same(const std::vector<Rec>& a, const std::vector<Rec>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].lsn != b[i].lsn || a[i].type != b[i].type || a[i].payload != b[i].payload)
      return false;
  }
  return true;
}

std::string Segment(const std::string& dir, uint64_t no) {
  return JoinPath(dir, WalSegmentName(no));
}

TEST_CASE("wal: headers of every readable version decode, others do not") {
  std::string bytes;
  EncodeWalHeader({7, 1234}, &bytes);
  REQUIRE(bytes.size() == kWalHeaderBytes);
  WalSegmentHeader h;
  REQUIRE(DecodeWalHeader(bytes, &h));
  CHECK(h.segment_no == 7);
  CHECK(h.first_lsn == 1234);
  // The sum covers the version: rewrite both, so only the version decides.
  auto with_version = [&](uint32_t v) {
    std::string b = bytes;
    EncodeFixed32(b.data() + 8, v);
    EncodeFixed64(b.data() + 28, XXH3_64bits(b.data(), 28));
    return b;
  };
  for (uint32_t v = 0; v <= kWalVersion + 2; ++v) {
    const bool readable = v >= kWalOldestReadableVersion && v <= kWalVersion;
    CHECK_MESSAGE(DecodeWalHeader(with_version(v), &h) == readable, "version " << v);
  }
}

TEST_CASE("wal: records round-trip across many segments in every mode") {
  for (DurabilityMode mode :
       {DurabilityMode::kAlways, DurabilityMode::kEverySec, DurabilityMode::kNone}) {
    TestDir dir;
    const auto written = WriteRecords(Env::Posix(), dir.path(), mode, 500, 1);
    std::vector<Rec> read;
    auto r = Scan(Env::Posix(), dir.path(), &read);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    CHECK(Same(read, written));
    CHECK(r->segments > 5);
    CHECK(r->first_lsn == 1);
    CHECK(r->last_lsn == 500);
    CHECK(r->torn_bytes == 0);
    // from_lsn skips older records but still checks them.
    read.clear();
    WalScanOptions from;
    from.from_lsn = 450;
    REQUIRE(Scan(Env::Posix(), dir.path(), &read, from).ok());
    CHECK(read.size() == 51);
  }
}

TEST_CASE("wal: AppendBatch gives consecutive LSNs, reads back like single appends, all or none") {
  for (DurabilityMode mode :
       {DurabilityMode::kAlways, DurabilityMode::kEverySec, DurabilityMode::kNone}) {
    TestDir dir;
    std::mt19937_64 rng(7);
    auto w = WalWriter::Open(Env::Posix(), dir.path(), Opts(mode), 1, 1);
    REQUIRE(w.ok());
    std::vector<Rec> written;
    for (int batch = 0; batch < 60; ++batch) {
      // Batches of 0 to 40 records, single appends between them.
      std::vector<std::string> payloads(rng() % 41);
      std::vector<WalWriter::Record> records;
      for (std::string& p : payloads) {
        p.resize(rng() % 120);
        for (char& c : p) c = static_cast<char>(rng());
      }
      for (const std::string& p : payloads) {
        records.push_back({static_cast<uint8_t>(1 + rng() % 3), p});
      }
      const uint64_t before = (*w)->last_lsn();
      auto last = (*w)->AppendBatch(records);
      REQUIRE(last.ok());
      CHECK(*last == before + records.size());
      for (size_t i = 0; i < records.size(); ++i) {
        written.push_back({before + 1 + i, records[i].type, payloads[i]});
      }
      REQUIRE((*w)->Commit(*last).ok());
      auto single = (*w)->Append(4, "one");
      REQUIRE(single.ok());
      CHECK(*single == *last + 1);
      written.push_back({*single, 4, "one"});
    }
    // A payload over 1 MiB refuses its whole batch: nothing of it is logged.
    const std::string big(kMaxRecordPayload + 1, 'x');
    const WalWriter::Record refused[] = {{1, "fine"}, {1, big}};
    auto r = (*w)->AppendBatch(refused);
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK(r.status().message().find("1 MiB") != std::string::npos);
    CHECK((*w)->last_lsn() == written.back().lsn);
    REQUIRE((*w)->Close().ok());
    std::vector<Rec> read;
    REQUIRE(Scan(Env::Posix(), dir.path(), &read).ok());
    CHECK(Same(read, written));
  }
}

TEST_CASE("wal: a record cut off at the end of the newest segment is a clean end") {
  TestDir dir;
  Env* env = Env::Posix();
  const auto written = WriteRecords(env, dir.path(), DurabilityMode::kNone, 40, 2, 1, 1);
  auto segments = ListWalSegments(env, dir.path());
  const std::string last = Segment(dir.path(), segments->back());
  const std::string original = *env->ReadFile(last);
  // Every cut inside the last record (and inside the header area of a new record).
  std::vector<Rec> all;
  REQUIRE(Scan(env, dir.path(), &all).ok());
  const size_t last_len = kWalRecordHeaderBytes + all.back().payload.size();
  for (size_t cut = 1; cut < last_len; ++cut) {
    auto f = env->OpenWritable(last, true);
    REQUIRE((*f)->Append(std::string_view(original).substr(0, original.size() - cut)).ok());
    REQUIRE((*f)->Close().ok());
    std::vector<Rec> read;
    auto r = Scan(env, dir.path(), &read);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    CHECK(r->torn_bytes == last_len - cut);
    CHECK(r->last_lsn == written.back().lsn - 1);
    CHECK(read.size() == written.size() - 1);
  }
  // With truncate_torn_tail the file is cut at the last good record, and writing resumes.
  WalScanOptions fix;
  fix.truncate_torn_tail = true;
  std::vector<Rec> read;
  auto r = Scan(env, dir.path(), &read, fix);
  REQUIRE(r.ok());
  read.clear();
  r = Scan(env, dir.path(), &read);
  CHECK(r->torn_bytes == 0);
  const auto more = WriteRecords(env, dir.path(), DurabilityMode::kAlways, 5, 3,
                                 r->last_segment_no + 1, r->last_lsn + 1);
  read.clear();
  REQUIRE(Scan(env, dir.path(), &read).ok());
  CHECK(read.size() == written.size() - 1 + 5);
}

TEST_CASE("wal: a segment cut inside its header is dropped as a torn tail") {
  TestDir dir;
  Env* env = Env::Posix();
  WriteRecords(env, dir.path(), DurabilityMode::kNone, 10, 4);
  const uint64_t next = ListWalSegments(env, dir.path())->back() + 1;
  auto f = env->OpenWritable(Segment(dir.path(), next), true);
  REQUIRE((*f)->Append("RGWAL").ok());
  REQUIRE((*f)->Close().ok());
  WalScanOptions fix;
  fix.truncate_torn_tail = true;
  std::vector<Rec> read;
  auto r = Scan(env, dir.path(), &read, fix);
  REQUIRE(r.ok());
  CHECK(r->torn_bytes == 5);
  CHECK_FALSE(env->Exists(Segment(dir.path(), next)));
}

TEST_CASE("wal: bit flips anywhere but a torn tail are reported with file, offset and the fix") {
  TestDir dir;
  Env* env = Env::Posix();
  WriteRecords(env, dir.path(), DurabilityMode::kNone, 300, 5);
  auto segments = *ListWalSegments(env, dir.path());
  std::mt19937 rng(9);
  for (int trial = 0; trial < 60; ++trial) {
    const uint64_t seg = segments[rng() % segments.size()];
    const std::string path = Segment(dir.path(), seg);
    const std::string original = *env->ReadFile(path);
    std::string damaged = original;
    const size_t at = rng() % damaged.size();
    damaged[at] = static_cast<char>(damaged[at] ^ (1 << (rng() % 8)));
    auto f = env->OpenWritable(path, true);
    REQUIRE((*f)->Append(damaged).ok());
    REQUIRE((*f)->Close().ok());
    std::vector<Rec> read;
    auto r = Scan(env, dir.path(), &read);
    // A flip in a length field of the newest segment may look like a torn tail; anything the
    // scan accepts must still be exactly the records before the damage.
    if (r.ok()) {
      CHECK(seg == segments.back());
      CHECK(r->torn_bytes > 0);
    } else {
      CHECK(r.status().code() == Code::kCorruption);
      CHECK(r.status().message().find(WalSegmentName(seg)) != std::string::npos);
      CHECK(r.status().message().find("offset") != std::string::npos);
      CHECK(r.status().message().find("relgraph-admin repair") != std::string::npos);
    }
    f = env->OpenWritable(path, true);
    REQUIRE((*f)->Append(original).ok());
    REQUIRE((*f)->Close().ok());
  }
}

TEST_CASE("wal: the last complete record with a bad checksum is corruption, not a torn tail") {
  TestDir dir;
  Env* env = Env::Posix();
  WriteRecords(env, dir.path(), DurabilityMode::kNone, 3, 6);
  const std::string path = Segment(dir.path(), 1);
  std::string data = *env->ReadFile(path);
  data.back() = static_cast<char>(data.back() ^ 1);
  auto f = env->OpenWritable(path, true);
  REQUIRE((*f)->Append(data).ok());
  REQUIRE((*f)->Close().ok());
  std::vector<Rec> read;
  CHECK(Scan(env, dir.path(), &read).status().code() == Code::kCorruption);
}

TEST_CASE("wal: a torn record in an older segment and a missing segment are corruption") {
  TestDir dir;
  Env* env = Env::Posix();
  WriteRecords(env, dir.path(), DurabilityMode::kNone, 200, 7);
  auto segments = *ListWalSegments(env, dir.path());
  REQUIRE(segments.size() >= 3);
  const std::string first = Segment(dir.path(), segments[0]);
  REQUIRE(env->Truncate(first, *env->FileSize(first) - 3).ok());
  std::vector<Rec> read;
  auto r = Scan(env, dir.path(), &read);
  CHECK(r.status().code() == Code::kCorruption);
  CHECK(r.status().message().find("older segment") != std::string::npos);

  TestDir dir2;
  WriteRecords(env, dir2.path(), DurabilityMode::kNone, 200, 7);
  REQUIRE(env->RemoveFile(Segment(dir2.path(), 2)).ok());
  read.clear();
  r = Scan(env, dir2.path(), &read);
  CHECK(r.status().code() == Code::kCorruption);
  CHECK(r.status().message().find("missing") != std::string::npos);
}

TEST_CASE("wal: a failed write or fsync is reported and every later write is refused") {
  for (int which = 0; which < 3; ++which) {
    TestDir dir;
    FaultInjectionEnv env(Env::Posix());
    auto w = WalWriter::Open(&env, dir.path(), Opts(DurabilityMode::kAlways), 1, 1);
    REQUIRE(w.ok());
    auto lsn = (*w)->Append(1, "ok");
    REQUIRE((*w)->Commit(*lsn).ok());
    if (which == 0) env.FailNthWrite(1);
    if (which == 1) env.FailNthSync(1);
    if (which == 2) env.SetDiskSpace(10);
    lsn = (*w)->Append(1, std::string(100, 'x'));
    REQUIRE(lsn.ok());  // buffered
    const Status c = (*w)->Commit(*lsn);
    CAPTURE(which);
    CHECK(c.code() == Code::kUnavailable);
    CHECK(c.message().find("injected") != std::string::npos);
    auto again = (*w)->Append(1, "more");
    CHECK(again.status().code() == Code::kUnavailable);
    CHECK_FALSE((*w)->health().ok());
    CHECK((*w)->durable_lsn() == 1);
  }
}

TEST_CASE(
    "wal: after a crash, `always` keeps every committed record; others keep what was synced") {
  for (DurabilityMode mode :
       {DurabilityMode::kAlways, DurabilityMode::kEverySec, DurabilityMode::kNone}) {
    TestDir dir;
    FaultInjectionEnv env(Env::Posix());
    auto w = WalWriter::Open(&env, dir.path(), Opts(mode, 1 << 20), 1, 1);
    REQUIRE(w.ok());
    uint64_t durable = 0;
    for (int i = 0; i < 300; ++i) {
      auto lsn = (*w)->Append(2, std::string(50, static_cast<char>(i)));
      REQUIRE((*w)->Commit(*lsn).ok());
      if (mode == DurabilityMode::kAlways) durable = *lsn;
      if (i == 150 && mode != DurabilityMode::kAlways) {
        REQUIRE((*w)->Flush(true).ok());
        durable = *lsn;
      }
    }
    env.SimulateCrash();
    w->reset();  // the dead process's writer: its closing flush fails and changes nothing
    env.Revive();
    std::vector<Rec> read;
    auto r = Scan(&env, dir.path(), &read);
    CAPTURE(DurabilityModeName(mode));
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    CHECK(r->last_lsn >= durable);
    for (size_t i = 0; i < read.size(); ++i) CHECK(read[i].lsn == i + 1);
  }
}

TEST_CASE("wal: concurrent `always` writers share fsyncs (group commit) and all are durable") {
  TestDir dir;
  FaultInjectionEnv env(Env::Posix());
  auto w = WalWriter::Open(&env, dir.path(), Opts(DurabilityMode::kAlways, 1 << 20), 1, 1);
  REQUIRE(w.ok());
  const int syncs_before = env.syncs();
  constexpr int kThreads = 8, kEach = 200;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto lsn = (*w)->Append(1, std::to_string(t * 1000 + i));
        if (!lsn.ok() || !(*w)->Commit(*lsn).ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
  CHECK((*w)->durable_lsn() == kThreads * kEach);
  const int syncs = env.syncs() - syncs_before;
  MESSAGE("fsyncs for ", kThreads * kEach, " commits: ", syncs);
  CHECK(syncs < kThreads * kEach);
  env.SimulateCrash();
  w->reset();
  env.Revive();
  std::vector<Rec> read;
  REQUIRE(Scan(&env, dir.path(), &read).ok());
  CHECK(read.size() == kThreads * kEach);
}

}  // namespace
}  // namespace relgraph
