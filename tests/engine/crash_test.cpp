// Crash test with real processes: a child applies random writes (follows, unfollows, user
// removals, and the access changes: blocks, private accounts, follow requests and their
// answers) with `always` durability while another thread takes snapshots, and reports every
// acknowledged write (its LSN and content) to the parent through a pipe. The parent kills it with
// SIGKILL at a random moment, reopens the data directory and checks that
//   * every acknowledged write is in the WAL at its LSN, with the same content;
//   * the recovered state covers the highest acknowledged LSN;
//   * the recovered state (snapshot + WAL tail) equals a model's replay of the whole WAL:
//     edges, blocks, pending requests and private users, with their times;
//   * no edge and no request joins a blocked pair.
// Cycles: RELGRAPH_CRASH_CYCLES (default 50). The Db keeps every WAL segment (keep_all_wal),
// so the whole history stays replayable whichever snapshots completed before a kill; the
// parent checks that the WAL still starts at LSN 1. One cycle in four kills the child within
// a few milliseconds (during Db::Open, before its first record or its first snapshot), so
// those paths are covered on every run, not only on a slow machine.
#include <doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "engine/db.h"
#include "engine/durable/wal_records.h"
#include "storage/wal/wal_reader.h"
#include "tests/engine/graph_state_model.h"
#include "tests/storage/test_dir.h"

namespace relgraph {
namespace {

constexpr int64_t kAnyTime = -1;     // the child does not know the record's time (engine clock)
constexpr uint8_t kAnyFlags = 0xff;  // the child does not check the record's flags

#pragma pack(push, 1)
struct Ack {  // one acknowledged write, as the child reports it: the record it must find
  uint64_t lsn;
  uint8_t type;
  uint64_t a, b;
  int64_t ts;
  uint8_t flags;
};
#pragma pack(pop)

Ack MakeAck(WalRecordType type, UserId a, UserId b, int64_t ts = kAnyTime,
            uint8_t flags = kAnyFlags) {
  return {0, static_cast<uint8_t>(type), a, b, ts, flags};
}

DbOptions CrashOptions() {
  DbOptions o;
  o.durability = DurabilityMode::kAlways;
  o.graph.rate_limit.enabled = false;
  o.wal_segment_bytes = 16 << 10;
  o.keep_all_wal = true;
  o.snapshot_slice_users = 16;
  return o;
}

[[noreturn]] void ChildMain(const std::string& dir, int fd, uint64_t seed) {
  auto db = Db::Open(dir, CrashOptions());
  if (!db.ok()) {
    std::fprintf(stderr, "child: open failed: %s\n", db.status().ToString().c_str());
    _exit(3);
  }
  std::atomic<bool> stop{false};
  std::thread snapshotter([&] {
    while (!stop) {
      (*db)->Snapshot().status().IgnoreError();
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
  });
  std::mt19937_64 rng(seed);
  for (;;) {
    const UserId a = 1 + rng() % 60, b = 1 + rng() % 60;
    const int dice = rng() % 100;
    Ack ack{};
    if (dice < 50) {
      const TimestampMs ts = static_cast<TimestampMs>(rng() % 100000);
      auto r = (*db)->FollowAt(a, b, ts);
      if (!r.ok() || !r->created) continue;
      const bool request = Has(r->relation, Relation::kRequested);
      ack = MakeAck(request ? WalRecordType::kRequest : WalRecordType::kFollow, a, b, ts);
    } else if (dice < 75) {
      auto r = (*db)->Unfollow(a, b);
      if (!r.ok() || !*r) continue;
      ack = MakeAck(WalRecordType::kUnfollow, a, b);
    } else if (dice < 78) {
      if (!(*db)->RemoveUser(a).ok()) continue;
      ack = MakeAck(WalRecordType::kRemoveUser, a, 0);
    } else if (dice < 82) {
      auto r = (*db)->Block(a, b);
      if (!r.ok() || !r->created) continue;
      ack = MakeAck(WalRecordType::kBlock, a, b, r->ts, BlockRecordFlags(*r));
    } else if (dice < 85) {
      auto r = (*db)->Unblock(a, b);
      if (!r.ok() || !*r) continue;
      ack = MakeAck(WalRecordType::kUnblock, a, b);
    } else if (dice < 90) {
      const bool on = rng() % 3 != 0;
      auto r = (*db)->SetPrivate(a, on);
      if (!r.ok() || !r->changed) continue;
      ack = MakeAck(WalRecordType::kSetPrivate, a, 0, r->ts, on ? 1 : 0);
    } else if (dice < 96) {
      auto r = (*db)->Approve(a, b);
      if (!r.ok()) continue;
      ack = MakeAck(WalRecordType::kApprove, a, b, r->followed_at);
    } else if (dice < 98) {
      auto r = (*db)->Reject(a, b);
      if (!r.ok() || !*r) continue;
      ack = MakeAck(WalRecordType::kReject, a, b);
    } else {
      auto r = (*db)->Withdraw(a, b);
      if (!r.ok() || !*r) continue;
      ack = MakeAck(WalRecordType::kWithdraw, a, b);
    }
    // Single-threaded writer: the LSN just logged is ours, and Commit has returned.
    ack.lsn = (*db)->last_lsn();
    if (write(fd, &ack, sizeof ack) != static_cast<ssize_t>(sizeof ack)) _exit(4);
  }
}

// Reads everything the child wrote until `deadline`, then what is left after it died.
void Collect(int fd, std::vector<Ack>* acks, std::string* partial, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  char buf[4096];
  for (;;) {
    const int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          deadline - std::chrono::steady_clock::now())
                                          .count());
    pollfd p{fd, POLLIN, 0};
    if (timeout_ms >= 0 && left <= 0) return;
    if (poll(&p, 1, timeout_ms >= 0 ? left : -1) <= 0) {
      if (timeout_ms >= 0) return;
      continue;
    }
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return;
    partial->append(buf, static_cast<size_t>(n));
    while (partial->size() >= sizeof(Ack)) {
      Ack a;
      std::memcpy(&a, partial->data(), sizeof a);
      acks->push_back(a);
      partial->erase(0, sizeof a);
    }
  }
}

// Replays one WAL record into the model, by the rules of docs/access.md.
void ApplyRecord(const WalOp& op, testing::GraphStateModel* m) {
  switch (op.type) {
    case WalRecordType::kFollow:
      m->Follow(op.a, op.b, op.ts);
      break;
    case WalRecordType::kUnfollow:
      m->Unfollow(op.a, op.b);
      break;
    case WalRecordType::kRemoveUser:
      m->RemoveUser(op.a);
      break;
    case WalRecordType::kBlock:
      m->Block(op.a, op.b, op.ts);
      break;
    case WalRecordType::kUnblock:
      m->Unblock(op.a, op.b);
      break;
    case WalRecordType::kSetPrivate:
      m->SetPrivate(op.a, op.flags != 0, op.ts);
      break;
    case WalRecordType::kRequest:
      m->Request(op.a, op.b, op.ts);
      break;
    case WalRecordType::kApprove:  // a is the target
      m->Approve(op.a, op.b, op.ts);
      break;
    case WalRecordType::kReject:  // a is the target
      m->RemoveRequest(op.b, op.a);
      break;
    case WalRecordType::kWithdraw:
      m->RemoveRequest(op.a, op.b);
      break;
    default:
      break;  // feed, cursor, epoch records: not written by this test's child
  }
}

TEST_CASE(
    "crash: SIGKILL at random moments (also mid-snapshot) never loses an acknowledged write") {
  const char* env_cycles = std::getenv("RELGRAPH_CRASH_CYCLES");
  const int cycles = env_cycles ? std::atoi(env_cycles) : 50;
  testing::TestDir dir;
  std::mt19937 rng(2026);
  std::map<uint64_t, Ack> acked;  // every acknowledged write so far, by LSN
  uint64_t total_acks = 0;
  uint64_t access_acks = 0;  // acknowledged blocks, requests, answers and private changes
  for (int cycle = 0; cycle < cycles; ++cycle) {
    CAPTURE(cycle);
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      ChildMain(dir.path(), fds[1], 1000 + static_cast<uint64_t>(cycle));
    }
    close(fds[1]);
    std::vector<Ack> acks;
    std::string partial;
    const bool short_kill = cycle < 2 || cycle % 4 == 0;
    const int kill_after_ms = static_cast<int>(short_kill ? rng() % 5 : 5 + rng() % 60);
    CAPTURE(kill_after_ms);
    Collect(fds[0], &acks, &partial, kill_after_ms);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    Collect(fds[0], &acks, &partial, -1);  // drain: the pipe closes with the child
    close(fds[0]);
    REQUIRE_MESSAGE(WIFSIGNALED(status), "the child exited on its own, status ", status);
    for (const Ack& a : acks) acked[uint64_t{a.lsn}] = a;
    total_acks += acks.size();

    // Recover in this process and check.
    auto db = Db::Open(dir.path(), CrashOptions());
    REQUIRE_MESSAGE(db.ok(), db.status().ToString());
    const uint64_t recovered = (*db)->recovery().last_lsn;
    if (!acked.empty()) REQUIRE(recovered >= acked.rbegin()->first);

    testing::GraphStateModel model;
    uint64_t first_lsn = 0;
    access_acks = 0;
    auto scan = ScanWal(Env::Posix(), dir.path(), {}, [&](const WalRecordView& r) {
      if (first_lsn == 0) first_lsn = r.lsn;
      auto op = DecodeWalRecord(r.type, r.payload);
      if (!op.ok()) return op.status();
      if (auto it = acked.find(r.lsn); it != acked.end()) {
        const Ack& want = it->second;
        if (want.type != r.type || want.a != op->a || want.b != op->b ||
            (want.ts != kAnyTime && want.ts != op->ts) ||
            (want.flags != kAnyFlags && want.flags != op->flags)) {
          return Status::Corruption("acknowledged write at LSN " + std::to_string(r.lsn) +
                                    " differs: " + DescribeWalRecord(r.type, r.payload));
        }
      }
      ApplyRecord(*op, &model);
      if (op->is_access_op() && acked.contains(r.lsn)) ++access_acks;
      return Status::OK();
    });
    REQUIRE_MESSAGE(scan.ok(), scan.status().ToString());
    REQUIRE(scan->last_lsn == recovered);
    if (recovered > 0) REQUIRE(first_lsn == 1);  // the replay below is the whole history
    const testing::GraphStateModel got =
        (*db)->Read([](const Graph& g) { return testing::GraphStateModel::Of(g); });
    CHECK(got.edges == model.edges);
    CHECK(got.blocks == model.blocks);
    CHECK(got.requests == model.requests);
    CHECK(got.private_users == model.private_users);
    for (const auto& [pair, ts] : got.blocks) {
      const auto [x, y] = pair;
      CHECK(!got.edges.contains({x, y}));
      CHECK(!got.edges.contains({y, x}));
      CHECK(!got.requests.contains({x, y}));
      CHECK(!got.requests.contains({y, x}));
    }
    REQUIRE((*db)->Read([](const Graph& g) { return g.CheckInvariants(); }).ok());
    REQUIRE((*db)->Close().ok());
  }
  MESSAGE(cycles, " kill cycles, ", total_acks, " acknowledged writes checked (", access_acks,
          " access changes counted on the last replay)");
  CHECK(total_acks > 0);
  CHECK(access_acks > 0);
}

}  // namespace
}  // namespace relgraph
