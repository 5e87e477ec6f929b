// Blocking HTTP/1.1 requests for the tests of the HTTP port: status, head and body.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

namespace relgraph::testing {

struct HttpGot {
  int status = 0;
  std::string head;
  std::string body;
};

// A request with a body and more headers ("Authorization: Bearer x\r\n"), on its own
// connection.
inline HttpGot HttpCall(uint16_t port, const std::string& method, const std::string& target,
                        const std::string& body, const std::string& headers = "");

inline HttpGot HttpGet(uint16_t port, const std::string& target,
                       const std::string& method = "GET") {
  return HttpCall(port, method, target, "");
}

// A raw TCP connection to 127.0.0.1:`port` (-1 when refused); the caller closes it.
inline int RawConnect(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

inline HttpGot HttpCall(uint16_t port, const std::string& method, const std::string& target,
                        const std::string& body, const std::string& headers) {
  HttpGot got;
  const int fd = RawConnect(port);
  if (fd < 0) return got;
  std::string request =
      method + " " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" + headers;
  if (!body.empty() || method == "POST") {
    request += "Content-Type: application/json\r\nContent-Length: " +
               std::to_string(body.size()) + "\r\n";
  }
  request += "\r\n" + body;
  (void)!::write(fd, request.data(), request.size());
  std::string all;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) all.append(buf, static_cast<size_t>(n));
  ::close(fd);
  const size_t end = all.find("\r\n\r\n");
  if (all.rfind("HTTP/1.1 ", 0) != 0 || end == std::string::npos) return got;
  got.status = std::stoi(all.substr(9, 3));
  got.head = all.substr(0, end);
  got.body = all.substr(end + 4);
  return got;
}

}  // namespace relgraph::testing
