// The JSON a command's reply is shown as: what the HTTP JSON API answers and what
// `relgraph-cli --json` prints (docs/http.md). For most commands it is the reply struct's JSON
// form (json_codec.h); the overloads below are the replies a person reads better otherwise:
//
//   relations        {"<other id>": "<relation>", ...}, keyed by the request's ids
//   block            the `removed` bits spelled: unfollowed, lost_follower, dropped_request
//   is_private       {"private": bool}
//   ping             {"pong": true}; ack {"acked": true}; delete_post and delete_cursor
//                    {"deleted": true} (the reply has no fields: success is the answer)
//   info             one member per field; durability by name, server_version "x.y.z",
//                    server_build as 16 hex digits
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "net/protocol/json_codec.h"
#include "net/protocol/messages.h"

namespace relgraph::net {

template <typename Req>
std::string ReplyJson(const Req&, const typename Req::Reply& reply) {
  return ToJson(reply);
}
std::string ReplyJson(const RelationsRequest& request, const RelationsReply& reply);
std::string ReplyJson(const BlockRequest& request, const BlockReply& reply);
std::string ReplyJson(const IsPrivateRequest& request, const IsPrivateReply& reply);
std::string ReplyJson(const PingRequest& request, const Empty& reply);
std::string ReplyJson(const AckRequest& request, const Empty& reply);
std::string ReplyJson(const DeletePostRequest& request, const Empty& reply);
std::string ReplyJson(const DeleteCursorRequest& request, const Empty& reply);
std::string ReplyJson(const InfoRequest& request, const InfoReply& reply);

// INFO's fields as (name, JSON value) pairs, as ReplyJson shows them.
std::vector<std::pair<std::string, std::string>> InfoJsonFields(const InfoReply& reply);

}  // namespace relgraph::net
