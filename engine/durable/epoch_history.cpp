#include "engine/durable/epoch_history.h"

#include <string>

namespace relgraph {

Status EpochHistory::CanApply(uint64_t number, uint64_t lsn) const {
  const Epoch& now = current();
  // Epoch 1 begins at LSN 1 without a record, so an epoch record may be LSN 1 itself (a node
  // promoted before it held any record).
  const bool first_record = now.number == 1 && now.first_lsn == 1 && lsn == 1;
  if (number <= now.number || (lsn <= now.first_lsn && !first_record)) {
    return Status::Corruption("epoch record for epoch " + std::to_string(number) + " at LSN " +
                              std::to_string(lsn) + " does not follow epoch " +
                              std::to_string(now.number) + " (begun at LSN " +
                              std::to_string(now.first_lsn) + ")");
  }
  return Status::OK();
}

Status EpochHistory::Apply(uint64_t number, uint64_t id, uint64_t lsn, TimestampMs ts) {
  RELGRAPH_RETURN_IF_ERROR(CanApply(number, lsn));
  epochs_.push_back(Epoch{number, id, lsn, ts});
  return Status::OK();
}

Status EpochHistory::Load(const std::vector<Epoch>& epochs) {
  EpochHistory h;
  for (const Epoch& e : epochs) {
    if (e.number == 1 && e.first_lsn == 1 && h.epochs_.size() == 1) {
      h.epochs_[0] = e;  // epoch 1 as written
      continue;
    }
    RELGRAPH_RETURN_IF_ERROR(h.Apply(e.number, e.id, e.first_lsn, e.started_ms));
  }
  *this = std::move(h);
  return Status::OK();
}

Status EpochHistory::CheckFollower(uint64_t number, uint64_t id, uint64_t last_lsn) const {
  for (size_t i = 0; i < epochs_.size(); ++i) {
    const Epoch& e = epochs_[i];
    if (e.number != number) continue;
    if (e.id != id) {
      return Status(Code::kDiverged,
                    "the replica is in epoch " + std::to_string(number) + " (id " +
                        std::to_string(id) + "), but this primary's epoch " +
                        std::to_string(number) + " has id " + std::to_string(e.id) +
                        ": two nodes were promoted independently",
                    static_cast<int64_t>(e.first_lsn));
    }
    if (i + 1 < epochs_.size() && last_lsn >= epochs_[i + 1].first_lsn) {
      return Status(Code::kDiverged,
                    "the replica holds LSNs " + std::to_string(epochs_[i + 1].first_lsn) + ".." +
                        std::to_string(last_lsn) + " of epoch " + std::to_string(number) +
                        ", which this primary never had: its epoch " +
                        std::to_string(epochs_[i + 1].number) + " began at LSN " +
                        std::to_string(epochs_[i + 1].first_lsn),
                    static_cast<int64_t>(epochs_[i + 1].first_lsn));
    }
    return Status::OK();
  }
  return Status(Code::kDiverged, "the replica is in epoch " + std::to_string(number) +
                                     ", which this primary's history (epochs 1.." +
                                     std::to_string(current().number) + ") does not hold");
}

}  // namespace relgraph
