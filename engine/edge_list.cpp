#include "engine/edge_list.h"

#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <vector>

#include "engine/clock.h"
#include "engine/graph.h"

namespace relgraph {
namespace {

constexpr size_t kBufferBytes = 1 << 20;

const char* SkipBlanks(const char* p, const char* end) {
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  return p;
}

}  // namespace

Result<std::unique_ptr<EdgeListReader>> EdgeListReader::Open(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    return Status::IOError("cannot open edge list " + path + ": " + std::strerror(errno));
  }
  gzbuffer(f, 1 << 17);
  return std::unique_ptr<EdgeListReader>(new EdgeListReader(f, path));
}

EdgeListReader::EdgeListReader(void* file, std::string path)
    : file_(file), path_(std::move(path)), buffer_(new char[kBufferBytes]) {}

EdgeListReader::~EdgeListReader() {
  gzclose(static_cast<gzFile>(file_));
}

bool EdgeListReader::Refill() {
  // Keep the unparsed tail (a partial line) at the front, then fill the rest.
  std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
  end_ -= begin_;
  begin_ = 0;
  if (end_ == kBufferBytes) {
    status_ = Status::InvalidArgument(path_ + ":" + std::to_string(line_ + 1) +
                                      ": line longer than 1 MiB");
    return false;
  }
  const int n = gzread(static_cast<gzFile>(file_), buffer_.get() + end_,
                       static_cast<unsigned>(kBufferBytes - end_));
  if (n < 0) {
    int err = 0;
    const char* msg = gzerror(static_cast<gzFile>(file_), &err);
    status_ = Status::IOError(path_ + ": read failed: " + (msg ? msg : "unknown error"));
    return false;
  }
  if (n == 0) eof_ = true;
  end_ += static_cast<size_t>(n);
  return true;
}

bool EdgeListReader::Next(EdgeRecord* out) {
  while (status_.ok()) {
    char* base = buffer_.get();
    const char* nl = static_cast<const char*>(std::memchr(base + begin_, '\n', end_ - begin_));
    if (nl == nullptr && !eof_) {
      if (!Refill()) return false;
      continue;
    }
    if (nl == nullptr && begin_ == end_) return false;  // clean end of file
    const char* line_begin = base + begin_;
    const char* line_end = nl != nullptr ? nl : base + end_;
    begin_ = static_cast<size_t>(line_end - base) + (nl != nullptr ? 1 : 0);
    ++line_;
    if (line_end > line_begin && line_end[-1] == '\r') --line_end;
    const char* p = SkipBlanks(line_begin, line_end);
    if (p == line_end || *p == '#') continue;
    return ParseLine(p, line_end, out);
  }
  return false;
}

bool EdgeListReader::ParseLine(const char* p, const char* end, EdgeRecord* out) {
  const std::string_view text(p, std::min<size_t>(static_cast<size_t>(end - p), 80));
  uint64_t fields[3];
  int count = 0;
  while (p < end) {
    if (count == 3) break;
    auto [next, ec] = std::from_chars(p, end, fields[count]);
    if (ec != std::errc() || (next < end && *next != ' ' && *next != '\t')) {
      count = -1;
      break;
    }
    ++count;
    p = SkipBlanks(next, end);
  }
  if (count < 2 || p < end || (count == 3 && fields[2] > uint64_t(kMaxTimestampMs))) {
    status_ = Status::InvalidArgument(
        path_ + ":" + std::to_string(line_) +
        ": expected 'follower followee [ts_ms]' with non-negative integers" +
        (count == 3 ? " and ts_ms <= " + std::to_string(kMaxTimestampMs) : "") + ", got '" +
        std::string(text) + "'");
    return false;
  }
  out->follower = fields[0];
  out->followee = fields[1];
  out->ts =
      count == 3 ? std::optional<TimestampMs>(static_cast<TimestampMs>(fields[2])) : std::nullopt;
  out->line = line_;
  return true;
}

Status OffsetEdgeIds(const std::string& path, const EdgeRecord& e, uint64_t id_offset, UserId* a,
                     UserId* b) {
  *a = e.follower + id_offset;
  *b = e.followee + id_offset;
  if (e.follower != e.followee && (*a == 0 || *b == 0)) {
    return Status(Code::kInvalidUserId,
                  path + ":" + std::to_string(e.line) +
                      ": user id 0 is invalid; load 0-based files with an id offset of 1");
  }
  return Status::OK();
}

Result<EdgeListLoadStats> LoadEdgeList(const std::string& path, Graph& graph,
                                       const EdgeListLoadOptions& options) {
  auto reader = EdgeListReader::Open(path);
  if (!reader.ok()) return reader.status();
  EdgeListLoadStats stats;
  constexpr size_t kBatch = 4096;
  std::vector<ImportEdge> batch;
  std::vector<uint64_t> lines;  // file line of each batched edge, for error messages
  batch.reserve(kBatch);
  lines.reserve(kBatch);
  const TimestampMs now = SystemClock::Default()->NowMs();
  auto flush = [&]() -> Status {
    auto r = graph.Import(batch);
    if (!r.ok()) {
      const uint64_t line = lines[static_cast<size_t>(r.status().detail())];
      return Status(r.status().code(),
                    path + ":" + std::to_string(line) + ": " + r.status().message());
    }
    stats.added += r->added;
    stats.duplicates += r->duplicates;
    stats.self_loops += r->self_loops;
    stats.over_cap += r->over_cap;
    batch.clear();
    lines.clear();
    return Status::OK();
  };
  EdgeRecord edge;
  while ((*reader)->Next(&edge)) {
    ++stats.edges_read;
    UserId a, b;
    if (Status bad = OffsetEdgeIds(path, edge, options.id_offset, &a, &b); !bad.ok()) {
      RELGRAPH_RETURN_IF_ERROR(flush());  // the edges before it stay
      return bad;
    }
    batch.push_back({a, b, edge.ts.value_or(now)});
    lines.push_back(edge.line);
    if (batch.size() == kBatch) RELGRAPH_RETURN_IF_ERROR(flush());
  }
  if (!(*reader)->status().ok()) return (*reader)->status();
  RELGRAPH_RETURN_IF_ERROR(flush());
  return stats;
}

}  // namespace relgraph
