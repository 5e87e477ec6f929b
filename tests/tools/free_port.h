// A free loopback port for tests that must know a server's address before it starts.
#pragma once

#include <doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>

namespace relgraph::testing {

// A loopback port nothing listens on now (the kernel's pick for a socket bound to port 0).
inline uint16_t FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

// A socket listening on a loopback port the kernel picked, for a test that plays the server
// itself (a stand-in for another program); the caller closes `fd`.
struct LoopbackListener {
  int fd = -1;
  uint16_t port = 0;
};
inline LoopbackListener ListenOnLoopback() {
  LoopbackListener l;
  l.fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(l.fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(l.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(l.fd, 4) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(l.fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  l.port = ntohs(a.sin_port);
  return l;
}

}  // namespace relgraph::testing
