// The commands of relgraph-admin. Each reads files with the same storage/ and engine/ code the
// server uses (ScanWal, ReadSnapshot, RecoverGraph), so what admin accepts, the server accepts.
#include "tools/admin/admin_commands.h"

#include "tools/admin/cluster_commands.h"
#include "tools/admin/admin_usage.h"
#include "tools/admin/group_commands.h"
#include "tools/admin/token_command.h"

#include <chrono>
#include <ctime>
#include <functional>
#include <map>

#include "engine/db.h"
#include "engine/durable/graph_snapshot.h"
#include "engine/durable/recovery.h"
#include "engine/durable/wal_records.h"
#include "engine/graph/time_resolution.h"
#include "engine/import/edge_list.h"
#include "engine/import/edge_list_import.h"
#include "net/client/client.h"
#include "relgraph_version.h"
#include "storage/env/file_names.h"
#include "storage/snapshot/snapshot_file.h"
#include "storage/wal/wal_reader.h"
#include "storage/wal/wal_repair.h"

namespace relgraph::admin {
namespace {

struct Args {
  std::string command;
  std::vector<std::string> positional;
  std::map<std::string, std::string> flags;  // "--no-cap" -> ""
  bool help = false;
};

Args Parse(const std::vector<std::string>& argv) {
  Args a;
  for (const std::string& s : argv) {
    if (s == "--help" || s == "-h") {
      a.help = true;
    } else if (s.rfind("--", 0) == 0) {
      const size_t eq = s.find('=');
      a.flags[s.substr(0, eq)] = eq == std::string::npos ? "" : s.substr(eq + 1);
    } else if (a.command.empty()) {
      a.command = s;
    } else {
      a.positional.push_back(s);
    }
  }
  return a;
}

struct Context {
  const Args& args;
  std::ostream& out;
  std::ostream& err;
  Env* env = Env::Posix();
  uint32_t time_unit_ms = 1;  // --follow-time-resolution: the data's, which its snapshots name

  int Fail(const Status& s) {
    err << "relgraph-admin " << args.command << ": " << s.message() << "\n";
    return 1;
  }
  int Usage(const std::string& what) {
    err << "relgraph-admin " << args.command << ": " << what << " (see relgraph-admin --help)\n";
    return 2;
  }
};

bool IsSnapshotFile(Env* env, const std::string& path) {
  FileType t;
  uint64_t n;
  const std::string name =
      path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  return ParseFileName(name, &t, &n) && t == FileType::kSnapshot &&
         !env->Exists(JoinPath(path, "LOCK"));
}

Result<std::unique_ptr<FileLock>> LockDir(Env* env, const std::string& dir) {
  if (!env->Exists(dir)) return Status::NotFound("data directory " + dir + " does not exist");
  return env->LockFile(JoinPath(dir, "LOCK"));
}

bool DirHasData(Env* env, const std::string& dir) {
  if (!env->Exists(dir)) return false;
  auto names = env->ListDir(dir);
  if (!names.ok()) return false;
  for (const std::string& n : *names) {
    FileType t;
    uint64_t x;
    if (ParseFileName(n, &t, &x)) return true;
  }
  return false;
}

// Creates `dir` (which must hold no relgraph data) and locks it for a command that fills it.
Result<std::unique_ptr<FileLock>> ClaimNewDataDir(Env* env, const std::string& dir,
                                                  const std::string& command) {
  if (DirHasData(env, dir)) {
    return Status::InvalidArgument(dir + " already holds relgraph data; " + command +
                                   " needs a new directory");
  }
  RELGRAPH_RETURN_IF_ERROR(env->CreateDir(dir));
  return LockDir(env, dir);
}

// The graph's invariants, then the feed's.
Status CheckInvariants(const Graph& graph, const Feed& feed) {
  RELGRAPH_RETURN_IF_ERROR(graph.CheckInvariants());
  return feed.CheckInvariants(graph);
}

// Loads a snapshot file with the engine's own loader, then audits the graph's and the feed's
// invariants.
Result<std::unique_ptr<Graph>> LoadSnapshotFile(Env* env, const std::string& path,
                                                const GraphOptions& options, SnapshotInfo* info) {
  auto state = LoadSnapshotState(env, path, options, FeedOptions{}, info);
  if (!state.ok()) return state.status();
  RELGRAPH_RETURN_IF_ERROR(CheckInvariants(*state->graph, *state->feed));
  return std::move(state->graph);
}

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string IsoTime(int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  char buf[64];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

GraphOptions RecoveryGraphOptions(const Context& c) {
  GraphOptions o;
  o.time_resolution_ms = c.time_unit_ms;
  o.rate_limit.enabled = false;
  o.max_following = kMaxFollowingLimit;  // recovery never re-decides the cap
  return o;
}

void PrintSnapshotInfo(std::ostream& out, const std::string& path, const SnapshotInfo& s) {
  // Version 3 holds a graph image, whose footer counts users; older ones edge-list entries.
  out << path << "\n  format version " << s.version
      << (s.version >= 3 ? " (graph image)" : " (edge list)") << ", lsn " << s.lsn << ", created "
      << IsoTime(s.created_ms) << "\n  " << s.entries
      << (s.version >= 3 ? " users, " : " entries, ") << s.edges << " edges in " << s.blocks
      << " blocks\n  " << s.file_bytes << " bytes on disk, " << s.raw_bytes << " uncompressed\n";
}

// ---- commands ---------------------------------------------------------------------------------

int Import(Context& c) {
  if (c.args.positional.size() != 2) return c.Usage("import takes EDGELIST DATADIR");
  const std::string& edges = c.args.positional[0];
  const std::string& dir = c.args.positional[1];
  EdgeListImportOptions io;
  for (const auto& [k, v] : c.args.flags) {
    if (k == "--no-cap") {
      io.max_following = kMaxFollowingLimit;
    } else if (k == "--max-following" || k == "--id-offset") {
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0') return c.Usage(k + " needs a whole number");
      if (k == "--id-offset")
        io.id_offset = n;
      else
        io.max_following =
            static_cast<uint32_t>(std::min<unsigned long long>(n, kMaxFollowingLimit));
    } else {
      return c.Usage("unknown flag " + k);
    }
  }
  if (io.max_following < 1) return c.Usage("--max-following must be at least 1");
  auto lock = ClaimNewDataDir(c.env, dir, "import");
  if (!lock.ok()) return c.Fail(lock.status());
  const auto start = std::chrono::steady_clock::now();
  auto imported = ImportEdgeListToSnapshot(c.env, edges, dir, io);
  if (!imported.ok()) return c.Fail(imported.status());
  const EdgeListLoadStats& stats = imported->stats;
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  c.out << "imported " << stats.added << " edges among " << imported->users << " users from "
        << edges << " in " << secs << " s (" << static_cast<uint64_t>(stats.edges_read / secs)
        << " edges/s)\n  skipped: " << stats.self_loops << " self-loops, " << stats.over_cap
        << " over the cap, " << stats.duplicates << " duplicates\n  wrote ";
  PrintSnapshotInfo(c.out, JoinPath(dir, SnapshotName(0)), imported->snapshot);
  if (stats.over_cap > 0) {  // the default cap drops follows silently otherwise
    c.err << "relgraph-admin import: dropped " << stats.over_cap << " follows past the cap of "
          << io.max_following << " followees per user; --no-cap keeps up to "
          << kMaxFollowingLimit << "\n";
  }
  return 0;
}

int Verify(Context& c) {
  if (c.args.positional.size() != 1) return c.Usage("verify takes DATADIR or SNAPSHOT");
  const std::string& target = c.args.positional[0];
  if (IsSnapshotFile(c.env, target)) {
    SnapshotInfo info;
    auto g = LoadSnapshotFile(c.env, target, RecoveryGraphOptions(c), &info);
    if (!g.ok()) return c.Fail(g.status());
    c.out << "ok: " << target << ": " << info.blocks << " blocks and their checksums, "
          << info.edges << " edges, graph and feed invariants hold\n"
          << "digest " << Hex((*g)->Digest()) << "\n";
    return 0;
  }
  auto lock = LockDir(c.env, target);
  if (!lock.ok()) return c.Fail(lock.status());
  auto snapshots = ListNumberedFiles(c.env, target, FileType::kSnapshot);
  if (!snapshots.ok()) return c.Fail(snapshots.status());
  int bad = 0;
  for (uint64_t lsn : *snapshots) {
    const std::string path = JoinPath(target, SnapshotName(lsn));
    SnapshotInfo info;
    auto g = LoadSnapshotFile(c.env, path, RecoveryGraphOptions(c), &info);
    if (g.ok()) {
      c.out << "ok: " << path << " (" << info.edges << " edges)\n";
    } else {
      c.out << "BAD: " << g.status().message() << "\n";
      ++bad;
    }
  }
  RecoveryInfo ri;
  auto state = RecoverState(c.env, target, RecoveryGraphOptions(c), FeedOptions{},
                            /*repair_torn_tail=*/false, &ri);
  if (!state.ok()) return c.Fail(state.status());
  const std::unique_ptr<Graph>& graph = state->graph;
  if (Status s = CheckInvariants(*graph, *state->feed); !s.ok()) return c.Fail(s);
  c.out << "ok: WAL checksums through LSN " << ri.last_lsn;
  if (ri.torn_bytes > 0)
    c.out << " (a torn tail of " << ri.torn_bytes << " bytes will be cut at the next open)";
  c.out << "\nok: recovered state: " << graph->user_count() << " users, " << graph->edge_count()
        << " edges, " << state->feed->Stats().posts << " posts, graph and feed invariants hold\n"
        << "digest " << Hex(graph->Digest()) << "\n"
        << "feed digest " << Hex(state->feed->Digest(*graph)) << "\n";
  if (bad > 0) {
    return c.Fail(Status::Corruption(std::to_string(bad) +
                                     " snapshot(s) failed their checks (recovery skips them)"));
  }
  return 0;
}

int Inspect(Context& c) {
  if (c.args.positional.size() != 1) return c.Usage("inspect takes DATADIR or SNAPSHOT");
  const std::string& target = c.args.positional[0];
  if (IsSnapshotFile(c.env, target)) {
    auto info = ReadSnapshot(c.env, target);
    if (!info.ok()) return c.Fail(info.status());
    PrintSnapshotInfo(c.out, target, *info);
    return 0;
  }
  auto lock = LockDir(c.env, target);
  if (!lock.ok()) return c.Fail(lock.status());
  auto snapshots = ListNumberedFiles(c.env, target, FileType::kSnapshot);
  if (!snapshots.ok()) return c.Fail(snapshots.status());
  c.out << "data directory " << target << "\nsnapshots: " << snapshots->size() << "\n";
  for (uint64_t lsn : *snapshots) {
    const std::string path = JoinPath(target, SnapshotName(lsn));
    auto info = ReadSnapshot(c.env, path);
    if (info.ok())
      PrintSnapshotInfo(c.out, path, *info);
    else
      c.out << path << "\n  DAMAGED: " << info.status().message() << "\n";
  }
  auto segments = ListWalSegments(c.env, target);
  if (!segments.ok()) return c.Fail(segments.status());
  uint64_t wal_bytes = 0;
  c.out << "WAL segments: " << segments->size() << "\n";
  for (uint64_t no : *segments) {
    const std::string path = JoinPath(target, WalSegmentName(no));
    auto size = c.env->FileSize(path);
    auto header = ReadWalSegmentHeader(c.env, target, no);
    wal_bytes += size.ok() ? *size : 0;
    c.out << "  " << WalSegmentName(no) << "  " << (size.ok() ? *size : 0) << " bytes, first LSN "
          << (header.ok() ? std::to_string(header->first_lsn)
                          : "? (" + header.status().message() + ")")
          << "\n";
  }
  auto scan = ScanWal(c.env, target, {}, [](const WalRecordView&) { return Status::OK(); });
  if (scan.ok()) {
    c.out << "WAL: LSN " << scan->first_lsn << " to " << scan->last_lsn << ", " << wal_bytes
          << " bytes";
    if (scan->torn_bytes) c.out << ", torn tail of " << scan->torn_bytes << " bytes";
    c.out << "\n";
  } else {
    c.out << "WAL: DAMAGED: " << scan.status().message() << "\n";
  }
  return 0;
}

int Export(Context& c) {
  if (c.args.positional.size() != 1) return c.Usage("export takes DATADIR");
  auto lock = LockDir(c.env, c.args.positional[0]);
  if (!lock.ok()) return c.Fail(lock.status());
  RecoveryInfo ri;
  auto graph = RecoverGraph(c.env, c.args.positional[0], RecoveryGraphOptions(c), false, &ri);
  if (!graph.ok()) return c.Fail(graph.status());
  std::string line;
  (*graph)->ForEachEdge([&](UserId a, UserId b, TimestampMs ts) {
    line.clear();
    line += std::to_string(a);
    line += ' ';
    line += std::to_string(b);
    line += ' ';
    line += std::to_string(ts);
    line += '\n';
    c.out << line;
  });
  return c.out.good() ? 0 : c.Fail(Status::IOError("writing to standard output failed"));
}

// A running server snapshots its own data directory (which it holds locked).
int ServerSnapshot(Context& c) {
  if (!c.args.positional.empty()) return c.Usage("snapshot --server takes no DATADIR");
  net::ClientOptions o;
  o.io_timeout = std::chrono::hours(1);  // a snapshot of a large graph takes a while
  if (auto t = c.args.flags.find("--token"); t != c.args.flags.end()) o.token = t->second;
  if (Status s = net::ParseHostPort(c.args.flags.at("--server"), &o.host, &o.port); !s.ok()) {
    return c.Usage(s.message());
  }
  auto client = net::Client::Connect(o);
  if (!client.ok()) return c.Fail(client.status());
  auto info = (*client)->Snapshot();
  if (!info.ok()) return c.Fail(info.status());
  c.out << "server wrote snapshot at lsn " << info->lsn << ": " << info->edges << " edges, "
        << info->file_bytes << " bytes\n";
  return 0;
}

int Snapshot(Context& c) {
  if (c.args.flags.count("--server")) return ServerSnapshot(c);
  if (c.args.positional.size() != 1) return c.Usage("snapshot takes DATADIR");
  const std::string& dir = c.args.positional[0];
  if (!c.env->Exists(dir))
    return c.Fail(Status::NotFound("data directory " + dir + " does not exist"));
  DbOptions o;
  o.graph = RecoveryGraphOptions(c);
  auto db = Db::Open(dir, o);
  if (!db.ok()) return c.Fail(db.status());
  auto info = (*db)->Snapshot();
  if (!info.ok()) return c.Fail(info.status());
  if (Status s = (*db)->Close(); !s.ok()) return c.Fail(s);
  c.out << "wrote ";
  PrintSnapshotInfo(c.out, JoinPath(dir, SnapshotName(info->lsn)), *info);
  return 0;
}

int Restore(Context& c) {
  if (c.args.positional.size() != 2) return c.Usage("restore takes SNAPSHOT DATADIR");
  const std::string& snap = c.args.positional[0];
  const std::string& dir = c.args.positional[1];
  SnapshotInfo info;
  auto g = LoadSnapshotFile(c.env, snap, RecoveryGraphOptions(c), &info);
  if (!g.ok()) return c.Fail(g.status());
  auto lock = ClaimNewDataDir(c.env, dir, "restore");
  if (!lock.ok()) return c.Fail(lock.status());
  // Copy through a temp name, then rename: the same atomicity as a snapshot written in place.
  auto data = c.env->ReadFile(snap);
  if (!data.ok()) return c.Fail(data.status());
  const std::string temp = JoinPath(dir, SnapshotTempName(info.lsn));
  auto f = c.env->OpenWritable(temp, true);
  if (!f.ok()) return c.Fail(f.status());
  Status s = (*f)->Append(*data);
  if (s.ok()) s = (*f)->Sync();
  if (s.ok()) s = (*f)->Close();
  if (s.ok()) s = c.env->Rename(temp, JoinPath(dir, SnapshotName(info.lsn)));
  if (s.ok()) s = c.env->SyncDir(dir);
  if (!s.ok()) return c.Fail(s);
  c.out << "restored " << info.edges << " edges at LSN " << info.lsn << " into " << dir << "\n";
  return 0;
}

int WalDump(Context& c) {
  if (c.args.positional.size() != 1) return c.Usage("wal-dump takes DATADIR");
  auto lock = LockDir(c.env, c.args.positional[0]);
  if (!lock.ok()) return c.Fail(lock.status());
  auto scan = ScanWal(c.env, c.args.positional[0], {}, [&](const WalRecordView& r) {
    c.out << r.lsn << " " << DescribeWalRecord(r.type, r.payload) << "\n";
    return Status::OK();
  });
  if (!scan.ok()) return c.Fail(scan.status());
  c.out << "# " << scan->records << " records in " << scan->segments << " segments";
  if (scan->torn_bytes)
    c.out << ", torn tail of " << scan->torn_bytes << " bytes in " << scan->torn_file;
  c.out << "\n";
  return 0;
}

int Repair(Context& c) {
  if (c.args.positional.size() != 1) return c.Usage("repair takes DATADIR");
  const std::string& dir = c.args.positional[0];
  auto lock = LockDir(c.env, dir);
  if (!lock.ok()) return c.Fail(lock.status());
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  auto report = RepairWal(c.env, dir, JoinPath(dir, "repair-backup-" + std::to_string(now)));
  if (!report.ok()) return c.Fail(report.status());
  if (!report->changed) {
    c.out << "nothing to repair: the WAL is intact through LSN " << report->kept_last_lsn << "\n";
    return 0;
  }
  c.out << "repaired " << dir << ": " << report->damage << "\n  the WAL now ends at LSN "
        << report->kept_last_lsn << "; dropped " << report->dropped_bytes << " bytes\n";
  if (!report->truncated_segment.empty()) {
    c.out << "  truncated " << report->truncated_segment << " at offset " << report->truncated_at
          << "\n";
  }
  for (const std::string& s : report->removed_segments) c.out << "  removed " << s << "\n";
  c.out << "  originals kept in " << report->backup_dir << "\n";
  return 0;
}

}  // namespace

int Run(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  const Args args = Parse(argv);
  if (args.command.empty() && args.flags.contains("--version")) {
    out << "relgraph-admin " << kVersion << "\n";
    return 0;
  }
  if (args.command.empty()) {
    (args.help ? out : err) << kUsage;
    return args.help ? 0 : 2;
  }
  static const std::map<std::string, std::function<int(Context&)>> commands = {
      {"import", Import},     {"verify", Verify},   {"inspect", Inspect},  {"export", Export},
      {"snapshot", Snapshot}, {"restore", Restore}, {"wal-dump", WalDump}, {"repair", Repair}};
  if (args.command == "cluster") {
    return ClusterCommand(args.positional, args.flags, args.help, out, err);
  }
  if (args.command == "token") {
    if (args.help) {
      out << kUsage;
      return 0;
    }
    return TokenCommand(args.positional, out, err);
  }
  if (args.command == "group") {
    return GroupCommand(args.positional, args.flags, args.help, out, err);
  }
  auto it = commands.find(args.command);
  if (it == commands.end()) {
    err << "relgraph-admin: unknown command '" << args.command << "'\n" << kUsage;
    return 2;
  }
  if (args.help) {
    out << kUsage;
    return 0;
  }
  for (const auto& [flag, value] : args.flags) {
    const bool known = args.command == "import" || flag == "--follow-time-resolution" ||
                       (args.command == "snapshot" && (flag == "--server" || flag == "--token"));
    if (!known) {
      err << "relgraph-admin " << args.command << ": unknown flag " << flag << "\n";
      return 2;
    }
  }
  Context c{args, out, err};
  if (auto f = args.flags.find("--follow-time-resolution"); f != args.flags.end()) {
    if (!ParseTimeResolution(f->second, &c.time_unit_ms).ok()) {
      return c.Usage("--follow-time-resolution takes 1ms or 1s, not '" + f->second + "'");
    }
  }
  return it->second(c);
}

}  // namespace relgraph::admin
