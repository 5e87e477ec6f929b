#include "storage/env/fault_injection_env.h"

#include <algorithm>
#include <cerrno>

namespace relgraph {

class FaultInjectionFile final : public WritableFile {
 public:
  FaultInjectionFile(FaultInjectionEnv* env, std::unique_ptr<WritableFile> base, std::string path)
      : env_(env), base_(std::move(base)), path_(std::move(path)) {}
  Status Append(std::string_view data) override { return env_->Write(base_.get(), path_, data); }
  Status Sync() override { return env_->Sync(base_.get(), path_); }
  Status Close() override { return base_->Close(); }
  uint64_t Size() const override { return base_->Size(); }

 private:
  FaultInjectionEnv* env_;
  std::unique_ptr<WritableFile> base_;
  std::string path_;
};

namespace {
std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}
}  // namespace

void FaultInjectionEnv::FailNthWrite(int n) {
  std::lock_guard l(mu_);
  write_countdown_ = n;
}
void FaultInjectionEnv::FailNthSync(int n) {
  std::lock_guard l(mu_);
  sync_countdown_ = n;
}
void FaultInjectionEnv::CorruptNthWriteTo(const std::string& path_part, int n) {
  std::lock_guard l(mu_);
  corrupt_part_ = path_part;
  corrupt_countdown_ = n;
}
void FaultInjectionEnv::SetDiskSpace(uint64_t bytes) {
  std::lock_guard l(mu_);
  space_left_ = bytes;
}
int FaultInjectionEnv::writes() const {
  std::lock_guard l(mu_);
  return writes_;
}
int FaultInjectionEnv::syncs() const {
  std::lock_guard l(mu_);
  return syncs_;
}

Status FaultInjectionEnv::Write(WritableFile* file, const std::string& path,
                                std::string_view data) {
  std::lock_guard l(mu_);
  if (crashed_) return Status::IOError("simulated crash: the process is gone");
  ++writes_;
  if (write_countdown_ > 0 && --write_countdown_ == 0) {
    return Status::IOError("injected write failure");
  }
  if (space_left_ != 0) {
    if (data.size() >= space_left_) {
      // Write the part that fits, as write(2) does before ENOSPC, and keep the disk full (1).
      const size_t fits = static_cast<size_t>(space_left_ - 1);
      space_left_ = 1;
      if (fits > 0) file->Append(data.substr(0, fits)).IgnoreError();  // the error is ENOSPC
      return Status(Code::kIOError, "injected: write " + path + ": No space left on device",
                    ENOSPC);
    }
    space_left_ -= data.size();
  }
  if (corrupt_countdown_ > 0 && !data.empty() && path.find(corrupt_part_) != std::string::npos &&
      --corrupt_countdown_ == 0) {
    std::string flipped(data);
    flipped[flipped.size() / 2] ^= 0x10;
    return file->Append(flipped);
  }
  return file->Append(data);
}

Status FaultInjectionEnv::Sync(WritableFile* file, const std::string& path) {
  std::lock_guard l(mu_);
  if (crashed_) return Status::IOError("simulated crash: the process is gone");
  ++syncs_;
  if (sync_countdown_ > 0 && --sync_countdown_ == 0)
    return Status::IOError("injected fsync failure");
  RELGRAPH_RETURN_IF_ERROR(file->Sync());
  synced_size_[path] = file->Size();
  return Status::OK();
}

void FaultInjectionEnv::Revive() {
  std::lock_guard l(mu_);
  crashed_ = false;
}

Status FaultInjectionEnv::Alive() {
  std::lock_guard l(mu_);
  return crashed_ ? Status::IOError("simulated crash: the process is gone") : Status::OK();
}

Result<std::unique_ptr<WritableFile>> FaultInjectionEnv::OpenWritable(const std::string& path,
                                                                      bool truncate) {
  RELGRAPH_RETURN_IF_ERROR(Alive());
  const bool existed = base_->Exists(path);
  auto f = base_->OpenWritable(path, truncate);
  if (!f.ok()) return f.status();
  std::lock_guard l(mu_);
  if (!existed) unsynced_creations_.insert(path);
  // A file we have not seen synced keeps what it held at open only if it existed already.
  if (!synced_size_.count(path) || truncate) synced_size_[path] = truncate ? 0 : (*f)->Size();
  return std::unique_ptr<WritableFile>(new FaultInjectionFile(this, std::move(*f), path));
}

Status FaultInjectionEnv::RemoveFile(const std::string& path) {
  RELGRAPH_RETURN_IF_ERROR(Alive());
  RELGRAPH_RETURN_IF_ERROR(base_->RemoveFile(path));
  std::lock_guard l(mu_);
  synced_size_.erase(path);
  unsynced_creations_.erase(path);
  return Status::OK();
}

Status FaultInjectionEnv::Rename(const std::string& from, const std::string& to) {
  RELGRAPH_RETURN_IF_ERROR(Alive());
  RELGRAPH_RETURN_IF_ERROR(base_->Rename(from, to));
  std::lock_guard l(mu_);
  if (auto it = synced_size_.find(from); it != synced_size_.end()) {
    synced_size_[to] = it->second;
    synced_size_.erase(it);
  }
  unsynced_renames_.push_back({from, to});
  return Status::OK();
}

Status FaultInjectionEnv::SyncDir(const std::string& dir) {
  RELGRAPH_RETURN_IF_ERROR(Alive());
  RELGRAPH_RETURN_IF_ERROR(base_->SyncDir(dir));
  std::lock_guard l(mu_);
  std::erase_if(unsynced_creations_, [&](const std::string& p) { return DirOf(p) == dir; });
  std::erase_if(unsynced_renames_, [&](const auto& r) { return DirOf(r.second) == dir; });
  return Status::OK();
}

Status FaultInjectionEnv::Truncate(const std::string& path, uint64_t size) {
  RELGRAPH_RETURN_IF_ERROR(Alive());
  RELGRAPH_RETURN_IF_ERROR(base_->Truncate(path, size));
  std::lock_guard l(mu_);
  if (auto it = synced_size_.find(path); it != synced_size_.end())
    it->second = std::min(it->second, size);
  return Status::OK();
}

void FaultInjectionEnv::SimulateCrash() {
  std::lock_guard l(mu_);
  crashed_ = true;
  // Undo renames newest first, then drop unsynced bytes and files.
  for (auto it = unsynced_renames_.rbegin(); it != unsynced_renames_.rend(); ++it) {
    base_->Rename(it->second, it->first).IgnoreError();
    if (auto s = synced_size_.find(it->second); s != synced_size_.end()) {
      synced_size_[it->first] = s->second;
      synced_size_.erase(s);
    }
  }
  unsynced_renames_.clear();
  for (const auto& [path, size] : synced_size_) {
    if (base_->Exists(path)) base_->Truncate(path, size).IgnoreError();
  }
  for (const std::string& path : unsynced_creations_) {
    base_->RemoveFile(path).IgnoreError();
    synced_size_.erase(path);
  }
  unsynced_creations_.clear();
}

}  // namespace relgraph
