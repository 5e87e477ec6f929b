// The JSON of a JetStream message-get reply is written by nats-server with fixed keys; only
// "error", "seq", "subject" and "data" are read, by finding their keys (none of the values
// read holds a quote: subjects are tokens, data is base64).
#include "net/roles/cluster/subject_reader.h"

#include <array>

#include "net/cluster/nats_link.h"

namespace relgraph {
namespace {

// The text of the JSON string value after `"key":`, or false.
bool StringField(std::string_view json, std::string_view key, std::string_view* out) {
  const std::string k = "\"" + std::string(key) + "\":\"";
  const size_t at = json.find(k);
  if (at == std::string_view::npos) return false;
  const size_t start = at + k.size();
  const size_t end = json.find('"', start);
  if (end == std::string_view::npos) return false;
  *out = json.substr(start, end - start);
  return true;
}

// The unsigned number after `"key":`, or false.
bool NumberField(std::string_view json, std::string_view key, uint64_t* out) {
  const std::string k = "\"" + std::string(key) + "\":";
  const size_t at = json.find(k);
  if (at == std::string_view::npos) return false;
  size_t i = at + k.size();
  if (i >= json.size() || json[i] < '0' || json[i] > '9') return false;
  uint64_t v = 0;
  for (; i < json.size() && json[i] >= '0' && json[i] <= '9'; ++i) v = v * 10 + (json[i] - '0');
  *out = v;
  return true;
}

}  // namespace

std::string MsgGetRequest(uint64_t from, std::string_view subject) {
  return "{\"seq\":" + std::to_string(from) + ",\"next_by_subj\":\"" + std::string(subject) + "\"}";
}

bool DecodeBase64(std::string_view in, std::string* out) {
  static const std::array<int8_t, 256> kValue = [] {
    std::array<int8_t, 256> v{};
    v.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) v[static_cast<uint8_t>(alphabet[i])] = static_cast<int8_t>(i);
    return v;
  }();
  out->clear();
  if (in.size() % 4 != 0) return false;
  out->reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    uint32_t group = 0;
    int pad = 0;
    for (size_t j = 0; j < 4; ++j) {
      const char c = in[i + j];
      if (c == '=' && i + 4 == in.size() && j >= 2) {
        ++pad;
        group <<= 6;
        continue;
      }
      const int8_t v = kValue[static_cast<uint8_t>(c)];
      if (v < 0 || pad > 0) return false;
      group = (group << 6) | static_cast<uint32_t>(v);
    }
    out->push_back(static_cast<char>(group >> 16));
    if (pad < 2) out->push_back(static_cast<char>((group >> 8) & 0xff));
    if (pad < 1) out->push_back(static_cast<char>(group & 0xff));
  }
  return true;
}

Result<StreamMessage> ParseMsgGetReply(std::string_view json) {
  if (const size_t e = json.find("\"error\":"); e != std::string_view::npos) {
    const std::string_view error = json.substr(e);
    uint64_t code = 0;
    std::string_view description;
    NumberField(error, "code", &code);
    StringField(error, "description", &description);
    const std::string what =
        "message get: " + std::string(description) + " (code " + std::to_string(code) + ")";
    return code == 404 ? Status::NotFound(what) : Status(Code::kUnavailable, what);
  }
  const size_t m = json.find("\"message\":");
  if (m == std::string_view::npos) {
    return Status::InvalidArgument("message get: a reply without a message or an error");
  }
  const std::string_view message = json.substr(m);
  StreamMessage out;
  std::string_view subject, data;
  if (!NumberField(message, "seq", &out.seq) || out.seq == 0) {
    return Status::InvalidArgument("message get: a reply without a sequence");
  }
  if (!StringField(message, "subject", &subject)) {
    return Status::InvalidArgument("message get: a reply without a subject");
  }
  out.subject = subject;
  // No "data" key: an empty message (Go omits an empty []byte).
  if (StringField(message, "data", &data) && !DecodeBase64(data, &out.data)) {
    return Status::InvalidArgument("message get: data that is not base64");
  }
  return out;
}

Result<StreamMessage> NextOnSubject(natsConnection* nc, const std::string& stream,
                                    const std::string& subject, uint64_t from, int64_t timeout_ms) {
  const std::string api = "$JS.API.STREAM.MSG.GET." + stream;
  const std::string body = MsgGetRequest(from, subject);
  natsMsg* reply = nullptr;
  natsStatus s = natsConnection_Request(&reply, nc, api.c_str(), body.data(),
                                        static_cast<int>(body.size()), timeout_ms);
  if (s != NATS_OK) {
    return net::NatsError("reading " + subject + " from sequence " + std::to_string(from), s);
  }
  auto parsed = ParseMsgGetReply(
      std::string_view(natsMsg_GetData(reply), static_cast<size_t>(natsMsg_GetDataLength(reply))));
  natsMsg_Destroy(reply);
  if (parsed.ok() && parsed->subject != subject) {
    return Status(Code::kUnavailable, "message get: asked for " + subject + ", got " +
                                          parsed->subject +
                                          " (a NATS server without next_by_subj?)");
  }
  return parsed;
}

}  // namespace relgraph
