// PosixEnv: Env on POSIX file descriptors. Every error names the call, the path and errno's text.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "storage/env/env.h"

namespace relgraph {
namespace {

Status PosixError(const std::string& what, const std::string& path, int err) {
  return Status(Code::kIOError, what + " " + path + ": " + std::strerror(err), err);
}

// The size of the open file `fd`; on failure the descriptor is closed.
Result<uint64_t> SizeOrClose(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return PosixError("fstat", path, err);
  }
  return static_cast<uint64_t>(st.st_size);
}

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(int fd, std::string path, uint64_t size)
      : fd_(fd), path_(std::move(path)), size_(size) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  Status Append(std::string_view data) override {
    while (!data.empty()) {
      const ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return PosixError("write", path_, errno);
      }
      data.remove_prefix(static_cast<size_t>(n));
      size_ += static_cast<uint64_t>(n);
    }
    return Status::OK();
  }
  Status Sync() override {
    if (::fdatasync(fd_) != 0) return PosixError("fdatasync", path_, errno);
    return Status::OK();
  }
  Status Close() override {
    if (fd_ < 0) return Status::OK();
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) return PosixError("close", path_, errno);
    return Status::OK();
  }
  uint64_t Size() const override { return size_; }

 private:
  int fd_;
  std::string path_;
  uint64_t size_;
};

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(int fd, std::string path, uint64_t size)
      : fd_(fd), path_(std::move(path)), size_(size) {}
  ~PosixRandomAccessFile() override { ::close(fd_); }

  Status ReadAt(uint64_t offset, size_t n, char* out) const override {
    auto got = ReadUpTo(offset, n, out);
    if (!got.ok()) return got.status();
    if (*got < n) {
      return Status(Code::kIOError, path_ + ": ends at offset " + std::to_string(offset + *got) +
                                        ", reading " + std::to_string(n) + " bytes at " +
                                        std::to_string(offset));
    }
    return Status::OK();
  }
  Result<size_t> ReadUpTo(uint64_t offset, size_t n, char* out) const override {
    size_t got = 0;
    while (got < n) {
      const ssize_t r = ::pread(fd_, out + got, n - got, static_cast<off_t>(offset + got));
      if (r < 0) {
        if (errno == EINTR) continue;
        return PosixError("pread", path_, errno);
      }
      if (r == 0) break;
      got += static_cast<size_t>(r);
    }
    return got;
  }
  uint64_t Size() const override { return size_; }

 private:
  int fd_;
  std::string path_;
  uint64_t size_;
};

class PosixFileLock final : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override { ::close(fd_); }  // closing releases the flock

 private:
  int fd_;
};

class PosixEnv final : public Env {
 private:
  // Reads up to `limit` bytes of `path` straight into a buffer sized from fstat (and keeps
  // going past that size if the file grew meanwhile).
  static Result<std::string> Read(const std::string& path, size_t limit) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PosixError("open", path, errno);
    auto size = SizeOrClose(fd, path);
    if (!size.ok()) return size.status();
    std::string out(std::min(static_cast<size_t>(*size), limit), '\0');
    size_t got = 0;
    while (got < limit) {
      if (got == out.size()) out.resize(std::min(limit, out.size() + (1 << 16)));
      const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
      if (n < 0) {
        if (errno == EINTR) continue;
        const int err = errno;
        ::close(fd);
        return PosixError("read", path, err);
      }
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    ::close(fd);
    out.resize(got);
    return out;
  }

 public:
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError("open", path, errno);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd);
      if (err == EWOULDBLOCK) {
        return Status(Code::kUnavailable,
                      path + " is locked: the data directory is in use by another process");
      }
      return PosixError("flock", path, err);
    }
    return std::unique_ptr<FileLock>(new PosixFileLock(fd));
  }

  Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path,
                                                     bool truncate) override {
    const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : O_APPEND);
    const int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) return PosixError("open", path, errno);
    auto size = SizeOrClose(fd, path);
    if (!size.ok()) return size.status();
    return std::unique_ptr<WritableFile>(new PosixWritableFile(fd, path, *size));
  }

  Result<std::string> ReadFile(const std::string& path) override { return Read(path, SIZE_MAX); }

  Result<std::unique_ptr<RandomAccessFile>> OpenRandomAccess(const std::string& path) override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PosixError("open", path, errno);
    auto size = SizeOrClose(fd, path);
    if (!size.ok()) return size.status();
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);  // a hint; failure is harmless
    return std::unique_ptr<RandomAccessFile>(new PosixRandomAccessFile(fd, path, *size));
  }

  Result<std::string> ReadFilePrefix(const std::string& path, size_t n) override {
    return Read(path, n);
  }

  Result<std::vector<std::string>> ListDir(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return PosixError("opendir", dir, errno);
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(d);
    return names;
  }

  Status CreateDir(const std::string& dir) override {
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return PosixError("mkdir", dir, errno);
    return Status::OK();
  }
  Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return PosixError("unlink", path, errno);
    return Status::OK();
  }
  Status Rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0)
      return PosixError("rename to " + to + " of", from, errno);
    return Status::OK();
  }
  Status SyncDir(const std::string& dir) override {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return PosixError("open", dir, errno);
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0) return PosixError("fsync", dir, err);
    return Status::OK();
  }
  Status Truncate(const std::string& path, uint64_t size) override {
    if (::truncate(path.c_str(), static_cast<off_t>(size)) != 0)
      return PosixError("truncate", path, errno);
    return Status::OK();
  }
  Result<uint64_t> FileSize(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return PosixError("stat", path, errno);
    return static_cast<uint64_t>(st.st_size);
  }
  bool Exists(const std::string& path) override {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
  }
};

}  // namespace

Env* Env::Posix() {
  static Env* env = new PosixEnv();
  return env;
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

bool IsNoSpace(const Status& s) {
  return s.code() == Code::kIOError && (s.detail() == ENOSPC || s.detail() == EDQUOT);
}

}  // namespace relgraph
