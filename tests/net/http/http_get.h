// A blocking HTTP/1.1 GET for the tests of the HTTP port: status and body.
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

inline HttpGot HttpGet(uint16_t port, const std::string& target,
                       const std::string& method = "GET") {
  HttpGot got;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return got;
  }
  const std::string request =
      method + " " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
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
