// WalTail: reading a live WAL forward while a writer appends, across segments, against the
// records written; its errors (expired, past the end, damage); a segment deleted under it.
#include "storage/wal/wal_tail.h"

#include <doctest.h>

#include <random>
#include <string>
#include <vector>

#include "storage/env/file_names.h"
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

WalWriterOptions SmallSegments() {
  WalWriterOptions o;
  o.mode = DurabilityMode::kNone;
  o.segment_bytes = 4096;
  o.buffer_bytes = 1500;
  return o;
}

Rec RandomRecord(std::mt19937_64& rng) {
  std::string payload(rng() % 300, '\0');
  for (char& c : payload) c = static_cast<char>(rng());
  return {0, static_cast<uint8_t>(1 + rng() % 9), payload};
}

// Reads whatever is visible up to `up_to`, in reads of random size, into *out.
void ReadAll(WalTail& tail, uint64_t up_to, std::mt19937_64& rng, std::vector<Rec>* out) {
  for (;;) {
    auto n = tail.Read(up_to, 1 + rng() % 50, [&](const WalRecordView& r) {
      out->push_back({r.lsn, r.type, std::string(r.payload)});
      return Status::OK();
    });
    REQUIRE(n.ok());
    if (*n == 0) return;
  }
}

TEST_CASE("wal tail: follows a live writer across segments, record for record") {
  TestDir dir;
  Env* env = Env::Posix();
  auto w = WalWriter::Open(env, dir.path(), SmallSegments(), 1, 1);
  REQUIRE(w.ok());
  std::mt19937_64 rng(3);
  std::vector<Rec> written;
  auto append = [&](int n) {
    for (int i = 0; i < n; ++i) {
      Rec r = RandomRecord(rng);
      auto lsn = (*w)->Append(r.type, r.payload);
      REQUIRE(lsn.ok());
      r.lsn = *lsn;
      written.push_back(r);
    }
  };
  append(5);
  REQUIRE((*w)->Flush(false).ok());
  auto tail = WalTail::Open(env, dir.path(), 1);
  REQUIRE(tail.ok());
  std::vector<Rec> read;
  for (int round = 0; round < 200; ++round) {
    append(static_cast<int>(rng() % 40));
    if (rng() % 3 != 0) REQUIRE((*w)->Flush(false).ok());
    // Only what the writer has written is visible; sometimes less is asked for.
    const uint64_t visible = (*w)->written_lsn();
    const uint64_t up_to = rng() % 4 == 0 ? visible / 2 : visible;
    ReadAll(**tail, up_to, rng, &read);
    REQUIRE(read.size() >= up_to);
    REQUIRE((*tail)->next_lsn() == read.size() + 1);
  }
  REQUIRE((*w)->Flush(false).ok());
  ReadAll(**tail, (*w)->written_lsn(), rng, &read);
  REQUIRE(read.size() == written.size());
  for (size_t i = 0; i < read.size(); ++i) {
    REQUIRE(read[i].lsn == written[i].lsn);
    REQUIRE(read[i].type == written[i].type);
    REQUIRE(read[i].payload == written[i].payload);
  }
  auto segments = ListWalSegments(env, dir.path());
  REQUIRE(segments.ok());
  REQUIRE(segments->size() > 10);  // the read crossed many segments

  SUBCASE("a tail opened at any LSN starts there") {
    for (int k = 0; k < 20; ++k) {
      const uint64_t from = 1 + rng() % written.size();
      auto t = WalTail::Open(env, dir.path(), from);
      REQUIRE(t.ok());
      std::vector<Rec> part;
      ReadAll(**t, written.size(), rng, &part);
      REQUIRE(part.size() == written.size() - from + 1);
      REQUIRE(part.front().lsn == from);
      REQUIRE(part.front().payload == written[from - 1].payload);
    }
    auto past = WalTail::Open(env, dir.path(), written.size() + 2);
    REQUIRE(past.status().code() == Code::kInvalidArgument);
    auto next = WalTail::Open(env, dir.path(), written.size() + 1);  // "from now" is fine
    REQUIRE(next.ok());
  }

  SUBCASE("before the oldest segment: kLsnExpired naming the oldest LSN") {
    auto second = ReadWalSegmentHeader(env, dir.path(), (*segments)[1]);
    REQUIRE(second.ok());
    REQUIRE(env->RemoveFile(JoinPath(dir.path(), WalSegmentName((*segments)[0]))).ok());
    uint64_t oldest = 0;
    auto t = WalTail::Open(env, dir.path(), 1, &oldest);
    REQUIRE(t.status().code() == Code::kLsnExpired);
    REQUIRE(oldest == second->first_lsn);
    REQUIRE(t.status().message().find(std::to_string(oldest)) != std::string::npos);
    REQUIRE(WalTail::Open(env, dir.path(), oldest).ok());
  }
}

// n random records, each written at once: many segments.
void WriteInSmallWrites(Env* env, const std::string& dir, int n, uint64_t seed) {
  auto w = WalWriter::Open(env, dir, SmallSegments(), 1, 1);
  REQUIRE(w.ok());
  std::mt19937_64 rng(seed);
  for (int i = 0; i < n; ++i) {
    REQUIRE((*w)->Append(2, RandomRecord(rng).payload).ok());
    REQUIRE((*w)->Flush(false).ok());
  }
  REQUIRE((*w)->Close().ok());
  REQUIRE(ListWalSegments(env, dir)->size() > 2);
}

TEST_CASE("wal tail: a segment deleted while open stays readable") {
  TestDir dir;
  Env* env = Env::Posix();
  WriteInSmallWrites(env, dir.path(), 200, 5);
  std::mt19937_64 rng(5);
  auto tail = WalTail::Open(env, dir.path(), 1);
  REQUIRE(tail.ok());
  std::vector<Rec> read;
  REQUIRE((*tail)
              ->Read(200, 1,
                     [&](const WalRecordView& r) {
                       read.push_back({r.lsn, r.type, std::string(r.payload)});
                       return Status::OK();
                     })
              .ok());
  REQUIRE(env->RemoveFile(JoinPath(dir.path(), WalSegmentName(1))).ok());
  ReadAll(**tail, 200, rng, &read);
  REQUIRE(read.size() == 200);
}

TEST_CASE("wal tail: damage stops the tail with the file, the offset and the LSN") {
  TestDir dir;
  Env* env = Env::Posix();
  WriteInSmallWrites(env, dir.path(), 100, 7);
  const std::string path = JoinPath(dir.path(), WalSegmentName(2));
  auto bytes = env->ReadFile(path);
  REQUIRE(bytes.ok());
  std::string damaged = *bytes;
  damaged[damaged.size() / 2] ^= 0x40;
  auto f = env->OpenWritable(path, /*truncate=*/true);
  REQUIRE(f.ok());
  REQUIRE((*f)->Append(damaged).ok());
  REQUIRE((*f)->Close().ok());
  auto tail = WalTail::Open(env, dir.path(), 1);
  REQUIRE(tail.ok());
  std::mt19937_64 rng(9);
  Status st;
  for (;;) {
    auto n = (*tail)->Read(100, 7, [](const WalRecordView&) { return Status::OK(); });
    if (!n.ok()) {
      st = n.status();
      break;
    }
    REQUIRE(*n > 0);  // it must not just stop at the damage
  }
  REQUIRE(st.code() == Code::kCorruption);
  REQUIRE(st.message().find(path) != std::string::npos);
  REQUIRE(st.message().find("LSN") != std::string::npos);
}

}  // namespace
}  // namespace relgraph
