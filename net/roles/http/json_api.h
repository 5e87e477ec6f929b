// JsonApi: the commands of the command table over HTTP, as JSON (docs/http.md, "JSON API").
//
//   POST /v1/<command>   body: a JSON object of the request's fields (empty body: {})
//   GET  /v1/<command>?field=value&...   the same for a command that only reads
//
// <command> is the name docs/protocol.md gives it (known_followers; known-followers works
// too). The answer is the JSON `relgraph-cli --json` prints (net/protocol/json_reply.h), or an
// error {"error": "<code>", "message": "..."} with the HTTP status HttpStatusOf gives its code.
// With a token configured, every call sends it as "Authorization: Bearer <token>".
//
// Why this design: the list of commands is the command table (net/protocol/command_table.h)
// and each request's fields are its wire struct's (json_codec.h), so a new command is served
// here without a line of this file; the call itself runs through net::Server::Call, so it
// gets what a binary connection's request gets (durability before the reply, metrics).
// Served: every request row but the connection-bound ones (ConnectionBound: HELLO, the
// streams, a replica's link), which answer 400 saying so.
//
// Thread-safety: the functions are thread-safe; Serve calls `respond` once, from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "net/http/http_server.h"
#include "net/protocol/json_value.h"
#include "net/server/server.h"
#include "storage/status.h"

namespace relgraph {

// The HTTP status for an error code: 400 bad input, 401 no valid token, 404 not found, 409 a
// state that forbids it (follow limit, a block, a full list, an id taken), 410 a stream
// position too old, 421 another shard owns the user, 429 rate-limited or a server limit, 503
// unavailable (a replica asked to write, a bucket moving, shutting down, outcome unknown), 501
// unsupported, 504 timeout, 500 the server's own failure.
unsigned HttpStatusOf(Code code);
// {"error":"follow_limit","message":"..."} (with "retry_after_ms" when rate-limited).
std::string ErrorJson(const Status& status);

class JsonApi {
 public:
  inline static constexpr std::string_view kPrefix = "/v1/";

  // Answers `request` (a path under kPrefix) through `respond`, running the command on
  // `server` (not owned; it must stay alive until Serve returns; a reply that comes later is
  // handed over by the server itself, which answers every call before it stops).
  static void Serve(net::Server* server, const net::HttpRequest& request, net::HttpRespond respond);

  // The names served, in table order.
  static std::vector<std::string_view> Commands();
};

// Decodes a query string ("user=2&limit=10&after=17%3A4") into a JSON object of strings.
// Errors: kInvalidArgument (a bad %-escape, a name given twice).
Result<net::JsonValue> QueryToJson(std::string_view query);

}  // namespace relgraph
