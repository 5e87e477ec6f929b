// Edge lists in SNAP style: one edge a line, `follower followee [ts_ms]`, separated by tabs or
// spaces; `#` starts a comment line; CRLF and blank lines are accepted; plain or gzip-compressed
// (detected from the bytes, not the name).
//
// EdgeListReader parses; LoadEdgeList applies a file to a Graph, counting rather than failing on
// the edges a graph refuses by design (self-loops, over-cap follows, duplicates). Malformed lines
// are errors naming the line, never skipped silently.
//
// Thread-safety: a reader is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/types.h"
#include "storage/status.h"

namespace relgraph {

class Graph;

// A byte range of an edge list that begins at a line start; reading it yields the lines that
// begin inside it. Splitting a file into ranges lets threads parse it concurrently.
struct EdgeListRange {
  uint64_t begin = 0;
  uint64_t end = UINT64_MAX;  // past the file's end: to the end
  uint64_t first_line = 0;    // lines before `begin`, for numbering (0 when unknown yet)
};

struct EdgeRecord {
  uint64_t follower = 0;
  uint64_t followee = 0;
  std::optional<TimestampMs> ts;
  uint64_t line = 0;  // 1-based line number in the file
};

class EdgeListReader {
 public:
  // Reads the whole file, or only `range` of a plain one. REQUIRES for a range that does not
  // start at 0: the file is plain (SplitEdgeList gives such ranges only for plain files).
  static Result<std::unique_ptr<EdgeListReader>> Open(const std::string& path,
                                                      const EdgeListRange& range = {});
  ~EdgeListReader();

  // Splits `path` into at most `parts` ranges of about equal size, each starting at a line
  // start, the last ending at the file's size. A gzip file is one range, {0, UINT64_MAX}: it
  // can only be read from its start.
  static Result<std::vector<EdgeListRange>> Split(const std::string& path, int parts);

  // Reads the next edge into *out. Returns false at the end of the file (with status OK) or on
  // error (status() says which line and why).
  bool Next(EdgeRecord* out);
  const Status& status() const { return status_; }
  // Lines consumed so far, comments and blank lines included (after range.first_line).
  uint64_t lines() const { return line_; }

 private:
  EdgeListReader(void* file, std::string path, const EdgeListRange& range);
  bool Refill();
  bool ParseLine(const char* begin, const char* end, EdgeRecord* out);

  void* file_;  // gzFile
  std::string path_;
  std::unique_ptr<char[]> buffer_;
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  uint64_t unread_;  // bytes of the range not yet read into buffer_
  uint64_t line_;
  Status status_;
};

// Shifts the ids of `e` by `id_offset` into *a and *b. kInvalidUserId naming the file and line
// when a shifted id is 0 (a 0-based file loaded without an offset). A self-loop is not checked:
// every loader skips it as a self-loop.
Status OffsetEdgeIds(const std::string& path, const EdgeRecord& e, uint64_t id_offset, UserId* a,
                     UserId* b);

struct EdgeListLoadOptions {
  // Added to every id in the file. SNAP files are often 0-based, and 0 is not a valid user id:
  // load them with id_offset = 1.
  uint64_t id_offset = 0;
};

struct EdgeListLoadStats {
  uint64_t edges_read = 0;  // edge lines in the file
  uint64_t added = 0;       // edges created
  uint64_t duplicates = 0;  // the edge existed already
  uint64_t self_loops = 0;
  uint64_t over_cap = 0;  // the follower already followed the maximum
  uint64_t skipped() const { return duplicates + self_loops + over_cap; }
};

// Loads every edge of `path` into `graph` through Graph::Import (no rate limiting): with the
// file's ts column where there is one, else at the time the load started. Id 0 stops the load
// with an error naming the line (edges before it stay).
Result<EdgeListLoadStats> LoadEdgeList(const std::string& path, Graph& graph,
                                       const EdgeListLoadOptions& options = {});

}  // namespace relgraph
