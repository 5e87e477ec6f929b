#include "engine/durable/cursor_table.h"

namespace relgraph {

Status CursorTable::ValidateName(std::string_view name) {
  if (name.empty() || name.size() > kMaxCursorName) {
    return Status::InvalidArgument("a cursor name is 1 to 64 bytes, got " +
                                   std::to_string(name.size()));
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) {
      return Status::InvalidArgument("cursor name '" + std::string(name) +
                                     "': use only letters, digits, '.', '_' and '-'");
    }
  }
  return Status::OK();
}

void CursorTable::Set(std::string_view name, uint64_t lsn, TimestampMs ts) {
  auto it = cursors_.find(name);
  if (it == cursors_.end()) it = cursors_.emplace(std::string(name), CursorState{}).first;
  it->second = CursorState{lsn, ts};
}

void CursorTable::Remove(std::string_view name) {
  if (auto it = cursors_.find(name); it != cursors_.end()) cursors_.erase(it);
}

void CursorTable::Apply(const WalOp& op) {
  if (op.removes_cursor()) {
    Remove(op.name);
  } else {
    Set(op.name, op.a, op.ts);
  }
}

const CursorState* CursorTable::Find(std::string_view name) const {
  auto it = cursors_.find(name);
  return it == cursors_.end() ? nullptr : &it->second;
}

void CursorTable::ForEach(
    const std::function<void(const std::string&, const CursorState&)>& fn) const {
  for (const auto& [name, state] : cursors_) fn(name, state);
}

uint64_t CursorTable::OldestResumeLsnSince(TimestampMs since_ms) const {
  uint64_t oldest = 0;
  for (const auto& [name, state] : cursors_) {
    if (state.acked_ms < since_ms) continue;
    if (oldest == 0 || state.acked_lsn + 1 < oldest) oldest = state.acked_lsn + 1;
  }
  return oldest;
}

}  // namespace relgraph
