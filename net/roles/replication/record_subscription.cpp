#include "net/roles/replication/record_subscription.h"

#include <algorithm>

#include "engine/durable/wal_records.h"

namespace relgraph {
namespace {

constexpr auto kHeartbeat = std::chrono::milliseconds(500);
constexpr size_t kRememberedFrames = 4096;  // frames sent and not yet answered

}  // namespace

RecordSubscription::RecordSubscription(Db* db, std::unique_ptr<ChangeReader> reader,
                                       Replication* replication, const std::string& name)
    : db_(db),
      reader_(std::move(reader)),
      replication_(replication),
      handle_(replication->Attach(name)),
      last_push_(std::chrono::steady_clock::now()) {}

RecordSubscription::~RecordSubscription() {
  replication_->Detach(handle_);
}

Result<size_t> RecordSubscription::Next(size_t max_body, std::string* body) {
  // first_lsn:u64 newest_lsn:u64 sent_us:i64 records:list<type:u8 payload:string>, encoded in
  // place: the count is known at the end.
  const size_t start = body->size();
  const uint64_t first = reader_->next_lsn();
  body->append(net::kRecordsHeaderBytes, '\0');
  size_t count = 0;
  // Every record takes at most 3 + 80 bytes (the largest payload, a cursor record's).
  const size_t max_records = std::min<size_t>(
      net::kMaxWireList, (max_body - net::kRecordsHeaderBytes) / (3 + sizeof(WalPayload::bytes)));
  auto records = reader_->ReadRecords(max_records, [&](const WalRecordView& r) -> Status {
    body->push_back(static_cast<char>(r.type));
    body->push_back(static_cast<char>(r.payload.size() & 0xff));
    body->push_back(static_cast<char>(r.payload.size() >> 8));
    body->append(r.payload);
    ++count;
    return Status::OK();
  });
  if (!records.ok()) {
    body->resize(start);
    return records.status();
  }
  const auto now = std::chrono::steady_clock::now();
  if (count == 0 && now - last_push_ < kHeartbeat) {
    body->resize(start);
    return size_t{0};
  }
  last_push_ = now;
  {
    std::lock_guard lock(sent_mu_);
    if (sent_.size() >= kRememberedFrames) sent_lost_ = true;  // the order is lost for good
    if (!sent_lost_) sent_.push_back(now);
  }
  net::EncodeRecordsHeader(body->data() + start, first, db_->last_lsn(), net::RecordsClockUs(),
                           count);
  return count;  // 0 with a heartbeat appended: nothing consumed, look again later
}

std::optional<std::chrono::steady_clock::time_point> RecordSubscription::TakeAnsweredFrameTime() {
  std::lock_guard lock(sent_mu_);
  if (sent_lost_ || sent_.empty()) return std::nullopt;
  const auto t = sent_.front();
  sent_.pop_front();
  return t;
}

}  // namespace relgraph
