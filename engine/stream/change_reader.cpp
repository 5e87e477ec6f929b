#include "engine/stream/change_reader.h"

#include "engine/durable/wal_records.h"

namespace relgraph {

Result<ChangeEvent> DecodeChangeEvent(uint64_t lsn, uint8_t type, std::string_view payload) {
  auto op = DecodeWalRecord(type, payload);
  if (!op.ok()) return op.status();
  ChangeEvent e;
  e.lsn = lsn;
  e.kind = static_cast<ChangeKind>(op->type);
  e.ts = op->ts;
  e.a = op->a;
  e.b = op->b;
  e.became_friends = (op->flags & kFollowBecameFriends) != 0;
  e.post_kind = op->kind;
  e.evicted = op->evicted;
  if (op->type == WalRecordType::kBlock || op->type == WalRecordType::kSetPrivate) {
    e.became_friends = false;
    e.flags = op->flags;
  }
  return e;
}

Result<std::unique_ptr<ChangeReader>> ChangeReader::Open(Env* env, const std::string& dir,
                                                         uint64_t from_lsn, ChangeKindMask kinds,
                                                         VisibleLsnFn visible,
                                                         uint64_t* oldest_lsn) {
  RELGRAPH_RETURN_IF_ERROR(ValidateChangeKindMask(kinds));
  auto tail = WalTail::Open(env, dir, from_lsn, oldest_lsn);
  if (!tail.ok()) return tail.status();
  return std::unique_ptr<ChangeReader>(
      new ChangeReader(std::move(*tail), kinds, std::move(visible)));
}

Result<size_t> ChangeReader::ReadRecords(size_t max_records,
                                         const std::function<Status(const WalRecordView&)>& fn) {
  if (!failed_.ok()) return failed_;
  const uint64_t up_to = visible_(tail_->next_lsn());
  if (up_to < tail_->next_lsn()) return size_t{0};
  auto n = tail_->Read(up_to, max_records, fn);
  if (!n.ok()) failed_ = n.status();
  return n;
}

Result<size_t> ChangeReader::Read(size_t max_records,
                                  const std::function<void(const ChangeEvent&)>& fn) {
  return ReadRecords(max_records, [&](const WalRecordView& r) -> Status {
    if (r.type == static_cast<uint8_t>(WalRecordType::kCursor) ||
        r.type == static_cast<uint8_t>(WalRecordType::kCursorStart) ||
        r.type == static_cast<uint8_t>(WalRecordType::kEpoch) ||
        r.type == static_cast<uint8_t>(WalRecordType::kPostsWanted) ||
        r.type == static_cast<uint8_t>(WalRecordType::kMoved)) {
      return Status::OK();  // not a change: no event (a moved record is state changing hands)
    }
    if (r.type == static_cast<uint8_t>(WalRecordType::kRemote)) {
      // Another shard's change: its event is in the deciding shard's stream, once.
      return Status::OK();
    }
    const bool known = r.type >= 1 && r.type <= kMaxChangeKind;
    if (known && (kinds_ & (ChangeKindMask{1} << r.type)) == 0) return Status::OK();
    auto e = DecodeChangeEvent(r.lsn, r.type, r.payload);
    if (!e.ok()) return e.status();
    fn(*e);
    return Status::OK();
  });
}

}  // namespace relgraph
