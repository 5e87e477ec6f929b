#include "net/server/command_record.h"

#include "net/protocol/protocol.h"
#include "net/protocol/request_text.h"

namespace relgraph::net {

std::string PeerText(const boost::asio::ip::tcp::endpoint& peer) {
  const auto address = peer.address();
  const std::string host = address.to_string();
  return (address.is_v6() ? "[" + host + "]" : host) + ":" + std::to_string(peer.port());
}

void RecordCommand(ServerCore& core, CommandRecorder& recorder,
                   const boost::asio::ip::tcp::endpoint& peer, std::string_view client_name,
                   uint8_t opcode, std::string_view body, uint64_t ns, Code code) {
  recorder.Record(opcode, ns, code);
  if (!core.slow_log.Wants(ns)) return;
  std::string client = client_name.empty() ? "" : std::string(client_name) + "@";
  NoteIfSlow(core, client + PeerText(peer), opcode, body, ns);
}

void NoteIfSlow(ServerCore& core, std::string_view client, uint8_t opcode, std::string_view body,
                uint64_t ns) {
  if (!core.slow_log.Wants(ns)) return;
  const auto now = std::chrono::system_clock::now();
  SlowlogEntry e;
  e.start_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                   (now - std::chrono::nanoseconds(ns)).time_since_epoch())
                   .count();
  e.duration_us = ns / 1000;
  e.command = std::string(OpcodeName(opcode));
  e.args = RequestText(opcode, body);
  e.client = std::string(client);
  core.slow_log.Add(std::move(e));
}

Status AppendSlowlogReply(ServerCore& core, std::string_view body, size_t max_body,
                          std::string* out) {
  SlowlogRequest request;
  RELGRAPH_RETURN_IF_ERROR(WireDecode(body, &request, "slowlog request"));
  SlowlogReply r = core.slow_log.Read(request.count, request.reset);
  const size_t start = out->size();
  for (;;) {
    WirePut(out, r);
    if (out->size() - start <= max_body || r.entries.empty()) return Status::OK();
    // Too many for one frame: drop the oldest quarter and encode again (rare: a long log
    // under a small --max-frame).
    out->resize(start);
    r.entries.resize(r.entries.size() - (r.entries.size() + 3) / 4);
  }
}

Code AnswerSlowlog(ServerCore& core, const Frame& frame, std::string* out) {
  const size_t start = BeginFrame(out, frame.request_id, frame.opcode, 0);
  const Status s = AppendSlowlogReply(core, frame.body,
                                      core.options.max_frame - kFrameHeaderBytes, out);
  if (!s.ok()) {
    out->resize(start);
    AppendErrorFrame(out, frame.request_id, frame.opcode, s);
    return s.code();
  }
  EndFrame(out, start);
  return Code::kOk;
}

}  // namespace relgraph::net
