#include "engine/import/edge_list.h"

#include <zlib.h>

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <vector>

#include "engine/graph/clock.h"
#include "engine/graph/graph.h"

namespace relgraph {
namespace {

constexpr size_t kBufferBytes = 1 << 20;

const char* SkipBlanks(const char* p, const char* end) {
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  return p;
}

// ---- the fast path: a canonical line, `digits sep digits [sep digits] [\r]\n` ---------------
// Why: std::from_chars takes one digit per step, and it was 80% of parsing a list of 64-bit
// ids. These take eight digits per step (SWAR: SIMD within a 64-bit register). Any line that is
// not canonical (blanks, comments, signs, more than 20 digits, overflow) goes to the general
// path, which also words every error, so both paths accept and reject exactly the same lines.

// The most bytes the fast path reads from a line's start: three 20-digit fields and their
// separators, plus an 8-byte load past the last digit.
constexpr size_t kFastLineBytes = 80;

uint64_t Load8(const char* p) {
  uint64_t x;
  std::memcpy(&x, p, 8);
  if constexpr (std::endian::native == std::endian::big) x = __builtin_bswap64(x);
  return x;  // the first byte is the least significant
}

// How many of the chunk's bytes, from the first, are ASCII digits (0 to 8).
int LeadingDigits(uint64_t x) {
  constexpr uint64_t kHigh = 0xF0F0F0F0F0F0F0F0, kZeros = 0x3030303030303030;
  // A byte is a digit iff its high nibble is 3 and stays 3 after adding 6. A carry out of a
  // byte >= 0xFA can only disturb later bytes, after a non-digit, which do not count.
  const uint64_t bad = ((x & kHigh) ^ kZeros) | (((x + 0x0606060606060606) & kHigh) ^ kZeros);
  return bad == 0 ? 8 : std::countr_zero(bad) / 8;
}

// The value of eight ASCII digits, the first the most significant.
uint64_t EightDigits(uint64_t x) {
  x -= 0x3030303030303030;
  x = x * 10 + (x >> 8);  // each 16-bit lane: two digits
  return (((x & 0x000000FF000000FF) * (100 + (1000000ULL << 32))) +
          (((x >> 16) & 0x000000FF000000FF) * (1 + (10000ULL << 32)))) >>
         32;
}

// The value of the first n (1 to 7) digits of a chunk: zeros are shifted in ahead of them.
uint64_t FirstDigits(uint64_t x, int n) {
  const int pad = 8 * (8 - n);
  return EightDigits((x << pad) | (0x3030303030303030 >> (64 - pad)));
}

constexpr uint64_t kPow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

// Parses the digits at p into *v; returns the end of the digits, or nullptr when there are
// none, more than 20, or the value overflows 64 bits. REQUIRES: 24 readable bytes at p.
[[gnu::always_inline]] inline const char* ParseDigits(const char* p, uint64_t* v) {
  const uint64_t c0 = Load8(p);
  const int n0 = LeadingDigits(c0);
  if (n0 < 8) {
    if (n0 == 0) return nullptr;
    *v = FirstDigits(c0, n0);
    return p + n0;
  }
  const uint64_t c1 = Load8(p + 8);
  const int n1 = LeadingDigits(c1);
  if (n1 < 8) {
    *v = EightDigits(c0) * kPow10[n1] + (n1 > 0 ? FirstDigits(c1, n1) : 0);
    return p + 8 + n1;
  }
  const uint64_t high = EightDigits(c0) * kPow10[8] + EightDigits(c1);  // < 10^16
  const uint64_t c2 = Load8(p + 16);
  const int n2 = LeadingDigits(c2);
  if (n2 == 0) {
    *v = high;
    return p + 16;
  }
  uint64_t scaled;
  if (n2 > 4 || __builtin_mul_overflow(high, kPow10[n2], &scaled) ||
      __builtin_add_overflow(scaled, FirstDigits(c2, n2), v)) {
    return nullptr;
  }
  return p + 16 + n2;
}

bool IsBlank(char c) {
  return c == ' ' || c == '\t';
}

// Parses a canonical line at p into `fields`; returns the byte after its newline and the field
// count, or nullptr for any other line. REQUIRES: kFastLineBytes readable bytes at p.
[[gnu::always_inline]] inline const char* ParseCanonicalLine(const char* p, uint64_t fields[3],
                                                             int* count) {
  const char* q = ParseDigits(p, &fields[0]);
  if (q == nullptr || !IsBlank(*q)) return nullptr;
  q = ParseDigits(q + 1, &fields[1]);
  if (q == nullptr) return nullptr;
  *count = 2;
  if (IsBlank(*q)) {
    q = ParseDigits(q + 1, &fields[2]);
    if (q == nullptr || fields[2] > uint64_t(kMaxTimestampMs)) return nullptr;
    *count = 3;
  }
  if (*q == '\r') ++q;
  return *q == '\n' ? q + 1 : nullptr;
}

}  // namespace

Result<std::unique_ptr<EdgeListReader>> EdgeListReader::Open(const std::string& path,
                                                             const EdgeListRange& range) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    return Status::IOError("cannot open edge list " + path + ": " + std::strerror(errno));
  }
  std::unique_ptr<EdgeListReader> reader(new EdgeListReader(f, path, range));
  gzbuffer(f, 1 << 17);
  if (range.begin > 0) {
    // zlib reads a plain file through, and seeks it with lseek.
    if (gzdirect(f) == 0)
      return Status(Code::kInternal, path + ": a compressed edge list can only be read whole");
    if (gzseek(f, static_cast<z_off_t>(range.begin), SEEK_SET) < 0)
      return Status::IOError(path + ": cannot seek to byte " + std::to_string(range.begin));
  }
  return reader;
}

Result<std::vector<EdgeListRange>> EdgeListReader::Split(const std::string& path, int parts) {
  auto reader = Open(path);
  if (!reader.ok()) return reader.status();
  gzFile f = static_cast<gzFile>((*reader)->file_);
  std::vector<EdgeListRange> ranges{{}};
  struct stat st;
  if (parts < 2 || gzdirect(f) == 0 || ::stat(path.c_str(), &st) != 0) return ranges;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  std::vector<char> chunk(kBufferBytes + 1);
  for (int i = 1; i < parts; ++i) {
    // The next range starts after the first newline at or past the ideal cut; a line is never
    // longer than the buffer, so a cut with no newline after it in that span ends the split.
    const uint64_t cut = std::max<uint64_t>(ranges.back().begin + 1, size * i / parts);
    if (cut >= size) break;
    if (gzseek(f, static_cast<z_off_t>(cut - 1), SEEK_SET) < 0)
      return Status::IOError(path + ": cannot seek to byte " + std::to_string(cut - 1));
    const int n = gzread(f, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) return Status::IOError(path + ": read failed while splitting it");
    const void* nl = std::memchr(chunk.data(), '\n', static_cast<size_t>(n));
    if (nl == nullptr) break;
    const uint64_t next = cut + static_cast<uint64_t>(static_cast<const char*>(nl) - chunk.data());
    if (next >= size) break;
    ranges.back().end = next;
    ranges.push_back({.begin = next});
  }
  if (ranges.size() > 1) ranges.back().end = size;
  return ranges;
}

EdgeListReader::EdgeListReader(void* file, std::string path, const EdgeListRange& range)
    : file_(file),
      path_(std::move(path)),
      buffer_(new char[kBufferBytes]),
      unread_(range.end - range.begin),
      line_(range.first_line) {}

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
                       static_cast<unsigned>(std::min<uint64_t>(kBufferBytes - end_, unread_)));
  if (n < 0) {
    int err = 0;
    const char* msg = gzerror(static_cast<gzFile>(file_), &err);
    status_ = Status::IOError(path_ + ": read failed: " + (msg ? msg : "unknown error"));
    return false;
  }
  if (n == 0) eof_ = true;
  end_ += static_cast<size_t>(n);
  unread_ -= static_cast<uint64_t>(n);
  return true;
}

bool EdgeListReader::Next(EdgeRecord* out) {
  while (status_.ok()) {
    char* base = buffer_.get();
    if (end_ - begin_ >= kFastLineBytes) {
      uint64_t fields[3];
      int count;
      if (const char* next = ParseCanonicalLine(base + begin_, fields, &count)) {
        begin_ = static_cast<size_t>(next - base);
        out->follower = fields[0];
        out->followee = fields[1];
        out->ts = count == 3 ? std::optional<TimestampMs>(static_cast<TimestampMs>(fields[2]))
                             : std::nullopt;
        out->line = ++line_;
        return true;
      }
    }
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
