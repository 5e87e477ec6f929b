// A free loopback port for tests that must know a server's address before it starts.
#pragma once

#include <doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <random>

namespace relgraph::testing {

// The lowest port the kernel hands out for outgoing connections (32768 unless configured).
inline uint16_t EphemeralPortsStart() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  unsigned low = 32768;
  in >> low;
  return static_cast<uint16_t>(low > 21000 ? low : 32768);
}

// A loopback port that binds now, picked at random below the kernel's ephemeral range: a port
// from that range could be taken by any outgoing connection (this test's clients, another
// test's) between this pick and the server's bind, and the server would then fail to start.
inline uint16_t FreeLoopbackPort() {
  static std::mt19937 rng(std::random_device{}());
  const uint16_t end = EphemeralPortsStart();
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const auto port = static_cast<uint16_t>(20000 + rng() % (end - 20000));
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    if (bound) return port;
  }
  FAIL("no free loopback port below " << end);
  return 0;
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
