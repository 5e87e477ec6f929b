#include "net/roles/cluster/change_message.h"

#include "storage/coding.h"

namespace relgraph {
namespace {
constexpr uint8_t kVersion = 2;
constexpr size_t kRecordHeaderBytes = 8 + 1 + 4;
constexpr size_t kHeaderBytes = 1 + 4 + 4;
}  // namespace

void StartChangeMessage(uint32_t origin, std::string* out) {
  out->clear();
  out->push_back(static_cast<char>(kVersion));
  PutFixed32(out, origin);
  PutFixed32(out, 0);
}

void AppendChangeRecord(uint64_t lsn, uint8_t type, std::string_view payload, std::string* out) {
  PutFixed64(out, lsn);
  out->push_back(static_cast<char>(type));
  PutFixed32(out, static_cast<uint32_t>(payload.size()));
  out->append(payload);
}

void FinishChangeMessage(uint32_t count, std::string* out) {
  EncodeFixed32(out->data() + 5, count);
}

Result<ChangeMessage> DecodeChangeMessage(std::string_view bytes) {
  auto bad = [](const std::string& what) {
    return Status::InvalidArgument("change message: " + what);
  };
  if (bytes.size() < kHeaderBytes) return bad(std::to_string(bytes.size()) + " bytes, no header");
  if (static_cast<uint8_t>(bytes[0]) != kVersion) {
    return bad("version " + std::to_string(static_cast<uint8_t>(bytes[0])) + ", expected " +
               std::to_string(kVersion));
  }
  ChangeMessage m;
  m.origin = DecodeFixed32(bytes.data() + 1);
  const uint32_t count = DecodeFixed32(bytes.data() + 5);
  size_t at = kHeaderBytes;
  m.records.reserve(std::min<size_t>(count, bytes.size() / kRecordHeaderBytes));
  for (uint32_t i = 0; i < count; ++i) {
    if (bytes.size() - at < kRecordHeaderBytes)
      return bad("record " + std::to_string(i) + " cut short");
    Db::ReplicatedRecord r;
    r.lsn = DecodeFixed64(bytes.data() + at);
    r.type = static_cast<uint8_t>(bytes[at + 8]);
    const size_t len = DecodeFixed32(bytes.data() + at + 9);
    at += kRecordHeaderBytes;
    if (bytes.size() - at < len) return bad("record " + std::to_string(i) + "'s payload cut short");
    r.payload = bytes.substr(at, len);
    at += len;
    if (!m.records.empty() && r.lsn <= m.records.back().lsn) {
      return bad("LSN " + std::to_string(r.lsn) + " after " + std::to_string(m.records.back().lsn));
    }
    m.records.push_back(r);
  }
  if (at != bytes.size())
    return bad(std::to_string(bytes.size() - at) + " bytes after the records");
  return m;
}

}  // namespace relgraph
