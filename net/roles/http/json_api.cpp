#include "net/roles/http/json_api.h"

#include <map>
#include <memory>

#include "net/protocol/command_table.h"
#include "net/protocol/json_reply.h"

namespace relgraph {
namespace {

using net::HttpRequest;
using net::HttpRespond;
using net::HttpResponse;
using net::JsonValue;

constexpr const char* kJson = "application/json";

HttpResponse ErrorResponse(const Status& s) {
  return HttpResponse{HttpStatusOf(s.code()), kJson, ErrorJson(s) + "\n"};
}

// One command: decodes its request from JSON, calls the server, answers its reply as JSON.
struct Route {
  net::Opcode opcode;
  bool reads_only;
  void (*run)(net::Server* server, const net::ClientIdentity& who, const JsonValue& args,
              HttpRespond respond);
};

template <typename Req>
void Run(net::Server* server, const net::ClientIdentity& who, const JsonValue& args,
         HttpRespond respond) {
  const std::string name(net::OpcodeName(Req::kOpcode));
  auto request = std::make_shared<Req>();
  if (Status s = net::JsonGet(args, name, request.get()); !s.ok()) {
    return respond(ErrorResponse(s));
  }
  std::string body;
  net::WirePut(&body, *request);
  server->Call(who, static_cast<uint8_t>(Req::kOpcode), std::move(body),
               [request, name, respond = std::move(respond)](Status s, std::string reply_body) {
                 if (!s.ok()) return respond(ErrorResponse(s));
                 typename Req::Reply reply;
                 s = net::WireDecode(reply_body, &reply, name + " reply");
                 if (!s.ok()) return respond(ErrorResponse(Status(Code::kInternal, s.message())));
                 respond(HttpResponse{200, kJson, net::ReplyJson(*request, reply) + "\n"});
               });
}

const std::map<std::string, Route, std::less<>>& Routes() {
  static const auto* routes = [] {
    auto* m = new std::map<std::string, Route, std::less<>>();
    net::ForEachCommand([&]<typename Row>() {
      if constexpr (Row::kDirection == net::Direction::kRequest) {
        if (!net::ConnectionBound(Row::kOpcode)) {
          (*m)[std::string(net::OpcodeName(Row::kOpcode))] =
              Route{Row::kOpcode, net::ReadsOnly(Row::kOpcode), &Run<typename Row::Body>};
        }
      }
    });
    return m;
  }();
  return *routes;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> PercentDecode(std::string_view in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out.push_back(' ');
    } else if (in[i] == '%') {
      if (i + 2 >= in.size()) {
        return Status::InvalidArgument("query: a '%' without two hex digits");
      }
      const int hi = HexValue(in[i + 1]), lo = HexValue(in[i + 2]);
      if (hi < 0 || lo < 0) return Status::InvalidArgument("query: a '%' without two hex digits");
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

}  // namespace

unsigned HttpStatusOf(Code code) {
  switch (code) {
    case Code::kOk:
      return 200;
    case Code::kInvalidArgument:
    case Code::kInvalidUserId:
    case Code::kSelfFollow:
    case Code::kProtocolError:
      return 400;
    case Code::kUnauthenticated:
      return 401;
    case Code::kNotFound:
      return 404;
    case Code::kFollowLimit:
    case Code::kAlreadyExists:
    case Code::kLimitExceeded:
    case Code::kBlocked:
    case Code::kDiverged:
      return 409;
    case Code::kLsnExpired:
      return 410;
    case Code::kPermissionDenied:
      return 403;
    case Code::kMoved:
      return 421;
    case Code::kRateLimited:
    case Code::kResourceExhausted:
      return 429;
    case Code::kUnsupported:
      return 501;
    case Code::kUnavailable:
    case Code::kReadOnly:
    case Code::kMoving:
      return 503;
    case Code::kTimeout:
      return 504;
    case Code::kCorruption:
    case Code::kIOError:
    case Code::kInternal:
      return 500;
  }
  return 500;
}

std::string ErrorJson(const Status& status) {
  std::string out = "{\"error\":";
  net::AppendJsonString(&out, CodeName(status.code()));
  out += ",\"message\":";
  net::AppendJsonString(&out, status.message());
  if (status.code() == Code::kRateLimited) {
    out += ",\"retry_after_ms\":" + std::to_string(status.retry_after_ms());
  }
  return out + "}";
}

Result<JsonValue> QueryToJson(std::string_view query) {
  JsonValue object;
  object.kind = JsonValue::Kind::kObject;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    auto name = PercentDecode(pair.substr(0, eq));
    if (!name.ok()) return name.status();
    auto value = PercentDecode(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    if (!value.ok()) return value.status();
    if (object.Find(*name) != nullptr) {
      return Status::InvalidArgument("query: \"" + *name + "\" is given twice");
    }
    JsonValue v;
    v.kind = JsonValue::Kind::kString;
    v.text = std::move(*value);
    object.members.emplace_back(std::move(*name), std::move(v));
  }
  return object;
}

std::vector<std::string_view> JsonApi::Commands() {
  std::vector<std::string_view> out;
  net::ForEachCommand([&]<typename Row>() {
    if (Row::kDirection == net::Direction::kRequest && !net::ConnectionBound(Row::kOpcode)) {
      out.push_back(net::OpcodeName(Row::kOpcode));
    }
  });
  return out;
}

void JsonApi::Serve(net::Server* server, const HttpRequest& request, HttpRespond respond) {
  std::string name = request.path.substr(std::min(request.path.size(), kPrefix.size()));
  for (char& c : name) c = c == '-' ? '_' : c;
  constexpr std::string_view kBearer = "Bearer ";
  const std::string_view given(request.authorization);
  if (!given.empty() && given.substr(0, kBearer.size()) != kBearer) {
    return respond(ErrorResponse(Status(Code::kUnauthenticated,
                                        "send the token as 'Authorization: Bearer TOKEN'")));
  }
  // A token, when sent, decides; else a verified client certificate names the client.
  auto who = server->Authenticate(given.substr(std::min(given.size(), kBearer.size())),
                                  request.client_cert_name);
  if (!who.ok()) {
    return respond(ErrorResponse(Status(
        Code::kUnauthenticated,
        !given.empty() ? who.status().message()
        : request.client_cert_name.empty()
            ? "send the token: 'Authorization: Bearer TOKEN'"
            : "the client certificate's name \"" + request.client_cert_name +
                  "\" is no client of this server; send a token: 'Authorization: Bearer TOKEN'")));
  }
  const auto it = Routes().find(name);
  if (it == Routes().end()) {
    const net::CommandInfo* bound = nullptr;
    for (const net::CommandInfo& c : net::kCommands) {
      if (c.name == name && c.direction == net::Direction::kRequest) bound = &c;
    }
    if (bound != nullptr) {
      return respond(ErrorResponse(
          Status::InvalidArgument(name +
                                  " belongs to a binary connection (a stream or a replica's link): "
                                  "docs/protocol.md")));
    }
    std::string known;
    for (std::string_view c : Commands()) known += (known.empty() ? "" : ", ") + std::string(c);
    return respond(HttpResponse{
        404, kJson,
        ErrorJson(Status::NotFound("no command \"" + name + "\" (commands: " + known + ")")) +
            "\n"});
  }
  const Route& route = it->second;
  Result<JsonValue> args = Status::OK();
  if (request.method == "POST") {
    if (!request.query.empty()) {
      return respond(ErrorResponse(Status::InvalidArgument(
          "a POST carries its fields in a JSON body, not in the query string")));
    }
    const bool blank = request.body.find_first_not_of(" \t\r\n") == std::string::npos;
    args = blank ? net::ParseJson("{}") : net::ParseJson(request.body);
    if (args.ok() && args->kind != JsonValue::Kind::kObject) {
      args = Status::InvalidArgument("the body must be a JSON object of the request's fields");
    }
  } else {
    if (!route.reads_only) {
      HttpResponse r =
          ErrorResponse(Status::InvalidArgument(name + " changes state: POST it with a JSON body"));
      r.status = 405;
      r.allow = "POST";
      return respond(std::move(r));
    }
    args = QueryToJson(request.query);
  }
  if (!args.ok()) return respond(ErrorResponse(args.status()));
  route.run(server, *who, *args, std::move(respond));
}

}  // namespace relgraph
