#include "net/http/http_server.h"

#include <doctest.h>

#include "tests/net/http/http_get.h"

namespace relgraph {
namespace {

net::HttpServerOptions AnyPort() {
  net::HttpServerOptions o;
  o.port = 0;
  return o;
}

TEST_CASE("http server: a route answers over a socket, others get 404, other methods 405") {
  net::HttpServer http(AnyPort());
  int calls = 0;
  http.Route("/hello", [&calls](const net::HttpRequest& r) {
    ++calls;
    return net::HttpResponse{200, "text/plain", "hi " + r.query + "\n"};
  });
  REQUIRE(http.Start().ok());
  const auto got = testing::HttpGet(http.port(), "/hello?x=1");
  CHECK(got.status == 200);
  CHECK(got.body == "hi x=1\n");
  CHECK(testing::HttpGet(http.port(), "/nope").status == 404);
  CHECK(testing::HttpGet(http.port(), "/nope").body.find("served: /hello") != std::string::npos);
  CHECK(testing::HttpGet(http.port(), "/hello", "POST").status == 405);
  const auto head = testing::HttpGet(http.port(), "/hello", "HEAD");
  CHECK(head.status == 200);
  CHECK(head.body.empty());
  CHECK(head.head.find("Content-Length: 4") != std::string::npos);  // "hi \n"
  CHECK(calls == 2);  // GET and HEAD; 404 and 405 never reach the handler
  http.Stop();
  CHECK(testing::HttpGet(http.port(), "/hello").status == 0);  // closed
}

TEST_CASE("http server: a taken port is an IOError naming it, a bad host invalid") {
  net::HttpServer first(AnyPort());
  REQUIRE(first.Start().ok());
  net::HttpServerOptions o;
  o.port = first.port();
  net::HttpServer second(o);
  const Status s = second.Start();
  CHECK(s.code() == Code::kIOError);
  CHECK(s.message().find(std::to_string(first.port())) != std::string::npos);
  o.host = "not-an-ip";
  CHECK(net::HttpServer(o).Start().code() == Code::kInvalidArgument);
}

}  // namespace
}  // namespace relgraph
