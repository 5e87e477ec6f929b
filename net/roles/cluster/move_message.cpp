#include "net/roles/cluster/move_message.h"

#include <xxhash.h>

#include "engine/durable/wal_records.h"
#include "storage/coding.h"

namespace relgraph {
namespace {
constexpr uint8_t kVersion = 1;
constexpr size_t kHeaderBytes = 1 + 8 + 4 + 4 + 8;
constexpr size_t kEntryHeaderBytes = 1 + 4;
}  // namespace

std::vector<std::string> EncodeMovePieces(uint64_t attempt, std::span<const Db::MovedState> state,
                                          size_t piece_bytes) {
  std::string all;
  for (const Db::MovedState& m : state) {
    all.push_back(static_cast<char>(m.type));
    PutFixed32(&all, static_cast<uint32_t>(m.payload.size()));
    all += m.payload;
  }
  const uint64_t hash = XXH3_64bits(all.data(), all.size());
  const uint32_t pieces =
      all.empty() ? 1 : static_cast<uint32_t>((all.size() + piece_bytes - 1) / piece_bytes);
  std::vector<std::string> out;
  for (uint32_t i = 0; i < pieces; ++i) {
    std::string p;
    p.push_back(static_cast<char>(kVersion));
    PutFixed64(&p, attempt);
    PutFixed32(&p, i);
    PutFixed32(&p, pieces);
    PutFixed64(&p, hash);
    const size_t at = size_t{i} * piece_bytes;
    if (at < all.size()) p.append(all, at, std::min(piece_bytes, all.size() - at));
    out.push_back(std::move(p));
  }
  return out;
}

Status MoveAssembler::Add(std::string_view piece) {
  if (piece.size() < kHeaderBytes) {
    return Status::InvalidArgument("a move piece of " + std::to_string(piece.size()) +
                                   " bytes, shorter than its " + std::to_string(kHeaderBytes) +
                                   "-byte header");
  }
  if (static_cast<uint8_t>(piece[0]) != kVersion) {
    return Status::InvalidArgument("a move piece of version " +
                                   std::to_string(static_cast<uint8_t>(piece[0])) + ", expected " +
                                   std::to_string(kVersion));
  }
  const uint64_t attempt = DecodeFixed64(piece.data() + 1);
  const uint32_t index = DecodeFixed32(piece.data() + 9);
  const uint32_t pieces = DecodeFixed32(piece.data() + 13);
  const uint64_t hash = DecodeFixed64(piece.data() + 17);
  if (pieces == 0 || index >= pieces) {
    return Status::InvalidArgument("a move piece numbered " + std::to_string(index) + " of " +
                                   std::to_string(pieces));
  }
  if (std::find(damaged_.begin(), damaged_.end(), attempt) != damaged_.end()) return Status::OK();
  Attempt& a = attempts_[attempt];
  if (a.pieces == 0) {
    a.pieces = pieces;
    a.hash = hash;
  } else if (a.pieces != pieces || a.hash != hash) {
    return Status::InvalidArgument("a move piece of attempt " + std::to_string(attempt) +
                                   " disagrees with its other pieces on their count or hash");
  }
  a.got.emplace(index, std::string(piece.substr(kHeaderBytes)));
  if (!complete_ && a.got.size() == a.pieces) complete_ = attempt;
  return Status::OK();
}

std::optional<Result<std::vector<Db::MovedState>>> MoveAssembler::Take() {
  if (!complete_) return std::nullopt;
  auto state = Decode(*complete_);
  if (!state.ok()) {
    damaged_.push_back(*complete_);
    attempts_.erase(*complete_);
    complete_.reset();
    for (const auto& [attempt, a] : attempts_) {
      if (a.got.size() == a.pieces) {
        complete_ = attempt;
        break;
      }
    }
  }
  return state;
}

Result<std::vector<Db::MovedState>> MoveAssembler::Decode(uint64_t attempt) const {
  const Attempt& a = attempts_.at(attempt);
  std::string all;
  for (const auto& [index, bytes] : a.got) all += bytes;
  const std::string which = "the move state of attempt " + std::to_string(attempt);
  if (XXH3_64bits(all.data(), all.size()) != a.hash) {
    return Status::Corruption(which + " fails its hash");
  }
  std::vector<Db::MovedState> state;
  for (size_t at = 0; at < all.size();) {
    if (all.size() - at < kEntryHeaderBytes) {
      return Status::Corruption(which + ": an entry header cut short at byte " +
                                std::to_string(at));
    }
    const uint8_t type = static_cast<uint8_t>(all[at]);
    const uint32_t len = DecodeFixed32(all.data() + at + 1);
    at += kEntryHeaderBytes;
    if (len > all.size() - at) {
      return Status::Corruption(which + ": an entry of " + std::to_string(len) +
                                " bytes cut short at byte " + std::to_string(at));
    }
    state.push_back({static_cast<WalRecordType>(type), all.substr(at, len)});
    at += len;
  }
  return state;
}

}  // namespace relgraph
