// WAL writer and reader: round trips, damage detection, fault injection, crash simulation.
#include <doctest.h>

#include <atomic>
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

// Options for the stall tests: no background retry (each test calls TryRepair), so every
// step is deterministic.
WalWriterOptions StallOpts(DurabilityMode mode, std::vector<WalEvent>* events = nullptr,
                           uint64_t segment_bytes = 4096) {
  WalWriterOptions o = Opts(mode, segment_bytes);
  o.retry_min = o.retry_max = std::chrono::hours(1);
  if (events != nullptr) o.on_event = [events](const WalEvent& e) { events->push_back(e); };
  return o;
}

// The three ways a write can fail: a full disk (what fits is written, a torn record), a
// failed write, a failed fsync (the record is whole in the file, but not durable).
void InjectFault(FaultInjectionEnv& env, int which) {
  if (which == 0) env.SetDiskSpace(30);
  if (which == 1) env.FailNthWrite(1);
  if (which == 2) env.FailNthSync(1);
}

TEST_CASE("wal: a failed write or fsync stalls the writer; a retry repairs the tail and resumes") {
  for (DurabilityMode mode :
       {DurabilityMode::kAlways, DurabilityMode::kEverySec, DurabilityMode::kNone}) {
    for (int which = 0; which < 3; ++which) {
      CAPTURE(DurabilityModeName(mode));
      CAPTURE(which);
      TestDir dir;
      FaultInjectionEnv env(Env::Posix());
      std::vector<WalEvent> events;
      auto w = WalWriter::Open(&env, dir.path(), StallOpts(mode, &events), 1, 1);
      REQUIRE(w.ok());
      std::vector<Rec> want;
      auto add = [&](std::string payload) {
        auto lsn = (*w)->Append(1, payload);
        REQUIRE(lsn.ok());
        want.push_back({*lsn, 1, std::move(payload)});
        return *lsn;
      };
      REQUIRE((*w)->Commit(add("ok")).ok());
      REQUIRE((*w)->Flush(true).ok());
      InjectFault(env, which);
      add(std::string(100, 'x'));
      const Status f = (*w)->Flush(true);
      CHECK(f.code() == Code::kUnavailable);
      CHECK(f.message().find("injected") != std::string::npos);
      const Status h = (*w)->health();
      CHECK(h.code() == Code::kIOError);
      CHECK(h.message().find("WAL segment 1") != std::string::npos);
      CHECK(IsNoSpace(h) == (which == 0));
      if (which == 0) CHECK(h.message().find("No space left on device") != std::string::npos);
      REQUIRE(events.size() == 1);
      CHECK(events[0].kind == WalEvent::Kind::kStalled);
      CHECK(events[0].message.find("injected") != std::string::npos);
      // Records appended while stalled are buffered, not refused: the engine applied their
      // change before the failure could be seen.
      add("while stalled");
      CHECK((*w)->Flush(true).code() == Code::kUnavailable);  // the retries own the file
      CHECK((*w)->durable_lsn() == 1);
      if (which == 0) {
        // Still full: the retry fails and changes nothing that counts.
        CHECK_FALSE((*w)->TryRepair().ok());
        CHECK_FALSE((*w)->health().ok());
        CHECK(events.size() == 1);  // one outage, one message
        env.SetDiskSpace(0);
      }
      REQUIRE_MESSAGE((*w)->TryRepair().ok(), (*w)->health().ToString());
      CHECK((*w)->health().ok());
      CHECK((*w)->durable_lsn() == 3);
      REQUIRE(events.size() == 2);
      CHECK(events[1].kind == WalEvent::Kind::kResumed);
      CHECK(events[1].message.find("records 2..3") != std::string::npos);
      REQUIRE((*w)->Commit(add("after")).ok());
      REQUIRE((*w)->Close().ok());
      std::vector<Rec> read;
      auto r = Scan(&env, dir.path(), &read);
      REQUIRE_MESSAGE(r.ok(), r.status().ToString());
      CHECK(r->torn_bytes == 0);  // the repair cut the torn record off
      CHECK(Same(read, want));
    }
  }
}

TEST_CASE("wal: an `always` committer waits through a stall and returns once a retry covers it") {
  TestDir dir;
  FaultInjectionEnv env(Env::Posix());
  auto w = WalWriter::Open(&env, dir.path(), StallOpts(DurabilityMode::kAlways), 1, 1);
  REQUIRE(w.ok());
  env.SetDiskSpace(30);
  auto lsn = (*w)->Append(1, std::string(100, 'x'));
  REQUIRE(lsn.ok());
  std::atomic<bool> returned{false};
  Status committed;
  std::thread committer([&] {
    committed = (*w)->Commit(*lsn);
    returned = true;
  });
  while ((*w)->health().ok()) std::this_thread::yield();  // the committer's flush failed
  CHECK_FALSE((*w)->TryRepair().ok());
  CHECK_FALSE(returned.load());  // neither acknowledged nor refused while stalled
  env.SetDiskSpace(0);
  REQUIRE((*w)->TryRepair().ok());
  committer.join();
  CHECK(committed.ok());
  CHECK((*w)->durable_lsn() == *lsn);
}

TEST_CASE("wal: Close while the disk stays full keeps every acknowledged record and no other") {
  for (DurabilityMode mode :
       {DurabilityMode::kAlways, DurabilityMode::kEverySec, DurabilityMode::kNone}) {
    for (int which = 0; which < 3; ++which) {
      CAPTURE(DurabilityModeName(mode));
      CAPTURE(which);
      TestDir dir;
      FaultInjectionEnv env(Env::Posix());
      std::vector<WalEvent> events;
      auto w = WalWriter::Open(&env, dir.path(), StallOpts(mode, &events), 1, 1);
      REQUIRE(w.ok());
      auto first = (*w)->Append(1, "acknowledged");
      REQUIRE((*w)->Commit(*first).ok());
      REQUIRE((*w)->Flush(true).ok());
      InjectFault(env, which);
      auto second = (*w)->Append(1, std::string(100, 'x'));
      REQUIRE(second.ok());
      CHECK_FALSE((*w)->Flush(true).ok());
      // Close's own retry must fail too: the disk is full from here on. (After a failed
      // fsync, the record is whole in the file: it must not stay there.)
      env.SetDiskSpace(1);
      const Status closed = (*w)->Close();
      REQUIRE_FALSE(events.empty());
      CHECK(events.back().kind == WalEvent::Kind::kClosedStalled);
      if (mode == DurabilityMode::kAlways) {
        // Record 2 was never acknowledged (its Commit had not returned): dropped, and its
        // committer is refused.
        CHECK_MESSAGE(closed.ok(), closed.ToString());
        CHECK(events.back().message.find("nothing acknowledged is lost") != std::string::npos);
        CHECK((*w)->Commit(*second).code() == Code::kUnavailable);
      } else {
        // The other modes acknowledged it at Append: losing it is a failure to report.
        CHECK(closed.code() == Code::kUnavailable);
        CHECK(closed.message().find("may be lost") != std::string::npos);
      }
      CHECK((*w)->Close().code() == closed.code());  // idempotent
      env.SetDiskSpace(0);
      std::vector<Rec> read;
      auto r = Scan(&env, dir.path(), &read);
      REQUIRE_MESSAGE(r.ok(), r.status().ToString());
      CHECK(r->torn_bytes == 0);
      REQUIRE(read.size() == 1);  // the unacknowledged record is not replayed
      CHECK(read[0].payload == "acknowledged");
    }
  }
}

TEST_CASE(
    "wal: random faults and repairs against a model: acknowledged records survive, in order") {
  std::mt19937_64 rng(43);
  for (int round = 0; round < 30; ++round) {
    const DurabilityMode mode = round % 3 == 0   ? DurabilityMode::kAlways
                                : round % 3 == 1 ? DurabilityMode::kEverySec
                                                 : DurabilityMode::kNone;
    CAPTURE(round);
    TestDir dir;
    FaultInjectionEnv env(Env::Posix());
    auto w = WalWriter::Open(&env, dir.path(), StallOpts(mode, nullptr, 1024), 1, 1);
    REQUIRE(w.ok());
    std::vector<Rec> appended;
    uint64_t acked = 0;  // every record through this LSN was acknowledged
    for (int step = 0; step < 200; ++step) {
      const int dice = static_cast<int>(rng() % 100);
      if (dice < 55) {
        std::string payload(rng() % 120, '\0');
        for (char& c : payload) c = static_cast<char>(rng());
        auto lsn = (*w)->Append(2, payload);
        REQUIRE(lsn.ok());
        appended.push_back({*lsn, 2, payload});
        if (mode != DurabilityMode::kAlways) acked = *lsn;  // acknowledged at Append
      } else if (dice < 75) {
        // `always` acknowledges what a Commit covered, that is what is fsynced (below); its
        // Commit would wait through a stall, so the test syncs with Flush.
        if (mode == DurabilityMode::kAlways) {
          (*w)->Flush(true).IgnoreError();
        } else {
          CHECK((*w)->Commit((*w)->last_lsn()).ok());
        }
      } else if (dice < 82) {
        (*w)->Flush(rng() % 2 == 0).IgnoreError();
      } else if (dice < 88) {
        InjectFault(env, static_cast<int>(rng() % 3));
        if (rng() % 2 == 0) env.SetDiskSpace(1 + rng() % 400);
      } else if (dice < 94) {
        if (rng() % 3 != 0) env.SetDiskSpace(0);
        const bool stalled = !(*w)->health().ok();
        const Status r = (*w)->TryRepair();
        if (r.ok() && stalled) CHECK((*w)->durable_lsn() == (*w)->last_lsn());
      } else {
        env.SetDiskSpace(0);  // space again, without a repair yet
      }
      CHECK((*w)->durable_lsn() <= (*w)->last_lsn());
      if (mode == DurabilityMode::kAlways) {
        CHECK((*w)->durable_lsn() >= acked);  // never goes back
        acked = (*w)->durable_lsn();
      }
    }
    const bool space = rng() % 2 == 0;
    if (space) env.SetDiskSpace(0);
    env.FailNthWrite(0);
    env.FailNthSync(0);
    const Status closed = (*w)->Close();
    env.SetDiskSpace(0);
    std::vector<Rec> read;
    auto r = Scan(&env, dir.path(), &read);
    REQUIRE_MESSAGE(r.ok(), r.status().ToString());
    CHECK(r->torn_bytes == 0);
    // What the WAL holds is a prefix of what was appended, byte for byte, in LSN order...
    REQUIRE(read.size() <= appended.size());
    CHECK(Same(read, std::vector<Rec>(appended.begin(), appended.begin() + read.size())));
    // ...that holds every acknowledged record, unless Close said it could not.
    if (closed.ok()) {
      CHECK(read.size() >= acked);
      if (space) CHECK(read.size() == appended.size());
    } else {
      CHECK(mode != DurabilityMode::kAlways);
    }
    if (mode == DurabilityMode::kAlways) CHECK(closed.ok());
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
