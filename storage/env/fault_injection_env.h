// FaultInjectionEnv: an Env over a real one that can fail on demand and simulate a crash.
//
//   * FailNthWrite(n) / FailNthSync(n): the n-th Append / Sync from now (1 = the next) fails
//     with an I/O error, once.
//   * SetDiskSpace(bytes): the disk holds fewer than `bytes` more bytes (0 = unlimited): an
//     Append that does not fit writes what does, as a real filesystem does, and fails with
//     "No space left on device" (IsNoSpace). SetDiskSpace(0) frees the space again.
//   * CorruptNthWriteTo(part, n): the n-th Append from now to a file whose path contains
//     `part` is written with one bit flipped in its middle byte and reports success: silent
//     corruption, as a bad disk or a stray write would leave.
//   * SimulateCrash(): what a power cut would leave: every file is cut back to the size it had
//     at its last Sync; files created, and renames done, since their directory's last SyncDir
//     are undone. Afterwards every write and sync fails ("the process is gone"), so objects of
//     the dead process can be closed and destroyed without touching the files; Revive() makes
//     the env usable again for the process that recovers.
//
// Thread-safety: all methods are thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "storage/env/env.h"

namespace relgraph {

class FaultInjectionEnv final : public Env {
 public:
  explicit FaultInjectionEnv(Env* base) : base_(base) {}

  void FailNthWrite(int n);
  void FailNthSync(int n);
  void SetDiskSpace(uint64_t bytes);
  void CorruptNthWriteTo(const std::string& path_part, int n);
  void SimulateCrash();
  void Revive();
  int writes() const;
  int syncs() const;

  Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path,
                                                     bool truncate) override;
  Result<std::string> ReadFile(const std::string& path) override { return base_->ReadFile(path); }
  Result<std::unique_ptr<RandomAccessFile>> OpenRandomAccess(const std::string& path) override {
    return base_->OpenRandomAccess(path);
  }
  Result<std::string> ReadFilePrefix(const std::string& path, size_t n) override {
    return base_->ReadFilePrefix(path, n);
  }
  Result<std::vector<std::string>> ListDir(const std::string& dir) override {
    return base_->ListDir(dir);
  }
  Status CreateDir(const std::string& dir) override { return base_->CreateDir(dir); }
  Status RemoveFile(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Status SyncDir(const std::string& dir) override;
  Status Truncate(const std::string& path, uint64_t size) override;
  Result<uint64_t> FileSize(const std::string& path) override { return base_->FileSize(path); }
  bool Exists(const std::string& path) override { return base_->Exists(path); }
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    return base_->LockFile(path);
  }

 private:
  friend class FaultInjectionFile;
  // Checks the fault knobs and performs the write or sync under mu_, so that no write can land
  // after SimulateCrash has cut the files.
  Status Write(WritableFile* file, const std::string& path, std::string_view data);
  Status Sync(WritableFile* file, const std::string& path);
  Status Alive();  // IOError after SimulateCrash, until Revive

  Env* base_;
  mutable std::mutex mu_;
  int write_countdown_ = 0, sync_countdown_ = 0;
  int writes_ = 0, syncs_ = 0;
  uint64_t space_left_ = 0;  // 0 = unlimited
  std::string corrupt_part_;
  int corrupt_countdown_ = 0;
  bool crashed_ = false;
  std::map<std::string, uint64_t> synced_size_;  // per file ever opened for writing
  std::set<std::string> unsynced_creations_;     // undone by a crash
  std::vector<std::pair<std::string, std::string>> unsynced_renames_;  // (from, to)
};

}  // namespace relgraph
