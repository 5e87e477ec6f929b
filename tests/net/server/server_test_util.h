// A real Server with the engine's CommandService on an ephemeral loopback port, for tests.
#pragma once

#include <doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "net/roles/service/command_service.h"
#include "engine/db.h"
#include "net/client/client.h"
#include "net/protocol/frame.h"
#include "net/server/server.h"

namespace relgraph::testing {

// One whole frame: header (flags or status byte as given) and `body`, as bytes to send raw.
inline std::string Frame(uint32_t id, net::Opcode op, std::string_view body, uint8_t flags = 0) {
  std::string out;
  const size_t start = net::BeginFrame(&out, id, static_cast<uint8_t>(op), flags);
  out.append(body);
  net::EndFrame(&out, start);
  return out;
}

// The frame of a request struct, its body encoded by the wire codec.
template <typename Request>
std::string RequestFrame(uint32_t id, const Request& request) {
  std::string body;
  net::WirePut(&body, request);
  return Frame(id, Request::kOpcode, body);
}

inline std::string HelloFrame(uint32_t id = 1, const std::string& token = "") {
  return RequestFrame(id, net::HelloRequest{net::kProtocolVersion, token});
}

struct TestServer {
  // An empty `dir` keeps the Db in memory.
  explicit TestServer(net::ServerOptions options = {}, std::string dir = "",
                      DbOptions db_options = NoRateLimit()) {
    auto opened = Db::Open(dir, db_options);
    REQUIRE(opened.ok());
    db = std::move(*opened);
    service = std::make_unique<CommandService>(db.get());
    options.port = 0;
    server = std::make_unique<net::Server>(options, service.get());
    REQUIRE(server->Start().ok());
  }
  ~TestServer() {
    server->Shutdown();
    server->Wait().IgnoreError();
  }
  static DbOptions NoRateLimit() {
    DbOptions o;
    o.graph.rate_limit.enabled = false;
    return o;
  }
  net::ClientOptions ClientOptions(std::string token = "") const {
    net::ClientOptions o;
    o.port = server->port();
    o.token = std::move(token);
    o.io_timeout = std::chrono::milliseconds(20000);
    return o;
  }
  std::unique_ptr<net::Client> Connect(std::string token = "") const {
    auto c = net::Client::Connect(ClientOptions(std::move(token)));
    REQUIRE_MESSAGE(c.ok(), c.status().ToString());
    return std::move(*c);
  }
  // A plain blocking socket connected to the server (for raw bytes and misbehaving peers).
  int RawSocket() const {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(server->port());
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    return fd;
  }

  std::unique_ptr<Db> db;
  std::unique_ptr<CommandService> service;
  std::unique_ptr<net::Server> server;
};

}  // namespace relgraph::testing
