#include "storage/env/file_names.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace relgraph {
namespace {

constexpr size_t kDigits = 20;

std::string Numbered(const char* prefix, uint64_t n, const char* suffix) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s%020llu%s", prefix, static_cast<unsigned long long>(n), suffix);
  return buf;
}

bool ParseNumbered(std::string_view name, std::string_view prefix, std::string_view suffix,
                   uint64_t* n) {
  if (name.size() != prefix.size() + kDigits + suffix.size()) return false;
  if (name.substr(0, prefix.size()) != prefix) return false;
  if (name.substr(prefix.size() + kDigits) != suffix) return false;
  const std::string_view digits = name.substr(prefix.size(), kDigits);
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *n);
  return ec == std::errc() && p == digits.data() + digits.size();
}

}  // namespace

std::string WalSegmentName(uint64_t segment_no) {
  return Numbered("wal-", segment_no, ".log");
}
std::string SnapshotName(uint64_t lsn) {
  return Numbered("snapshot-", lsn, ".rgs");
}
std::string SnapshotTempName(uint64_t lsn) {
  return Numbered("snapshot-", lsn, ".rgs.tmp");
}

bool ParseFileName(std::string_view name, FileType* type, uint64_t* number) {
  if (ParseNumbered(name, "wal-", ".log", number)) {
    *type = FileType::kWalSegment;
    return true;
  }
  if (ParseNumbered(name, "snapshot-", ".rgs", number)) {
    *type = FileType::kSnapshot;
    return true;
  }
  if (ParseNumbered(name, "snapshot-", ".rgs.tmp", number)) {
    *type = FileType::kSnapshotTemp;
    return true;
  }
  return false;
}

Result<std::vector<uint64_t>> ListNumberedFiles(Env* env, const std::string& dir, FileType type) {
  auto names = env->ListDir(dir);
  if (!names.ok()) return names.status();
  std::vector<uint64_t> numbers;
  for (const std::string& name : *names) {
    FileType t;
    uint64_t n;
    if (ParseFileName(name, &t, &n) && t == type) numbers.push_back(n);
  }
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

}  // namespace relgraph
