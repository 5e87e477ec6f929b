// Env: the only way storage/ reaches the filesystem. PosixEnv is the real one;
// FaultInjectionEnv (storage/env/fault_injection_env.h) wraps it for tests, so that every failure
// path (a failed write or fsync, a full disk, a crash that loses unsynced bytes) can be driven.
//
// Thread-safety: Env methods are thread-safe. A WritableFile is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "storage/status.h"

namespace relgraph {

class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(std::string_view data) = 0;
  virtual Status Sync() = 0;  // data and size reach stable storage (fdatasync)
  virtual Status Close() = 0;
  virtual uint64_t Size() const = 0;  // bytes appended so far, including what it held at open
};

// A file read at offsets: snapshots are read a block at a time, not whole.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // Reads exactly `n` bytes at `offset` into `out`; kIOError (naming the file) if the file
  // ends first or the read fails.
  virtual Status ReadAt(uint64_t offset, size_t n, char* out) const = 0;
  // Reads up to `n` bytes at `offset` into `out` and returns how many: fewer (0 at the end)
  // when the file ends first, as it is now (a file being appended to grows between calls).
  virtual Result<size_t> ReadUpTo(uint64_t offset, size_t n, char* out) const = 0;
  virtual uint64_t Size() const = 0;  // at open
};

// Held while it exists; released on destruction (and by the OS if the process dies).
class FileLock {
 public:
  virtual ~FileLock() = default;
};

class Env {
 public:
  virtual ~Env() = default;

  // Opens `path` for appending, creating it if absent (truncate: start empty).
  virtual Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path,
                                                             bool truncate) = 0;
  virtual Result<std::string> ReadFile(const std::string& path) = 0;
  virtual Result<std::unique_ptr<RandomAccessFile>> OpenRandomAccess(const std::string& path) = 0;
  // The first min(n, size) bytes of `path`.
  virtual Result<std::string> ReadFilePrefix(const std::string& path, size_t n) = 0;
  // Names (not paths) of the entries of `dir`, unsorted.
  virtual Result<std::vector<std::string>> ListDir(const std::string& dir) = 0;
  virtual Status CreateDir(const std::string& dir) = 0;  // OK if it exists
  virtual Status RemoveFile(const std::string& path) = 0;
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  virtual Status SyncDir(const std::string& dir) = 0;  // makes renames and creations durable
  virtual Status Truncate(const std::string& path, uint64_t size) = 0;
  virtual Result<uint64_t> FileSize(const std::string& path) = 0;
  virtual bool Exists(const std::string& path) = 0;
  // Takes an exclusive advisory lock on `path` (created if absent) without waiting:
  // kUnavailable when another process (or another Db in this one) holds it.
  virtual Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) = 0;

  static Env* Posix();  // process-wide, never destroyed
};

std::string JoinPath(const std::string& dir, const std::string& name);

// Whether an Env error says the filesystem is full: kIOError with detail() ENOSPC or EDQUOT
// (Env errors carry errno in detail(), 0 when there is none).
bool IsNoSpace(const Status& s);

}  // namespace relgraph
