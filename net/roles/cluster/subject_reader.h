// Reading one subject's messages from a JetStream stream directly, in stream order, without a
// consumer: the inbox fills a gap in its consumer's deliveries so (net/roles/cluster/
// inbox_order.h). One request to the stream's leader per message:
//   $JS.API.STREAM.MSG.GET.<stream>  {"seq":<from>,"next_by_subj":"<subject>"}
// answered with the first message of the subject at or after `from`:
//   {"type":"...","message":{"subject":"...","seq":N,"hdrs":"<base64>","data":"<base64>",...}}
// or {"type":"...","error":{"code":404,"err_code":10037,"description":"no message found"}}.
//
// Thread-safety: pure functions, and NextOnSubject as thread-safe as the NATS connection.
#pragma once

#include <nats/nats.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/status.h"

namespace relgraph {

struct StreamMessage {
  uint64_t seq = 0;
  std::string subject;
  std::string data;
};

// The request's body.
std::string MsgGetRequest(uint64_t from, std::string_view subject);
// The reply's message. kNotFound for JetStream's "no message found" (code 404);
// kUnavailable naming any other error it reports; kInvalidArgument for a reply that is not
// such JSON (a missing seq, bad base64).
Result<StreamMessage> ParseMsgGetReply(std::string_view json);
// Standard base64 with padding, as Go encodes []byte in JSON, into *out; false if malformed.
bool DecodeBase64(std::string_view in, std::string* out);

// The first message of `subject` in `stream` at or after sequence `from`, waiting up to
// `timeout_ms`. kNotFound when there is none; kUnavailable when NATS did not answer.
Result<StreamMessage> NextOnSubject(natsConnection* nc, const std::string& stream,
                                    const std::string& subject, uint64_t from, int64_t timeout_ms);

}  // namespace relgraph
