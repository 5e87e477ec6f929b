#include "tools/bench/http_load.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace relgraph::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

struct HttpConnection {
  int fd = -1;
  std::string out;  // the request being sent
  size_t sent = 0;
  std::string in;  // what came back of its reply
  SteadyClock::time_point started;
  bool busy = false;
};

// The length of the first whole reply in `in` and its status, or 0 while it is incomplete.
size_t WholeReply(const std::string& in, int* status) {
  const size_t head_end = in.find("\r\n\r\n");
  if (head_end == std::string::npos) return 0;
  if (in.size() < 12) return 0;
  *status = std::atoi(in.c_str() + 9);
  size_t length = 0;
  const size_t at = in.find("Content-Length: ");
  if (at != std::string::npos && at < head_end)
    length = std::strtoull(in.c_str() + at + 16, nullptr, 10);
  const size_t total = head_end + 4 + length;
  return in.size() >= total ? total : 0;
}

Result<int> Dial(const std::string& host, uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    ::close(fd);
    return Status::InvalidArgument("--http: not an IPv4 address: " + host);
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return Status::IOError("cannot connect to the HTTP port " + host + ":" + std::to_string(port) +
                           ": " + why);
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace

Result<WorkloadResult> RunHttpLoad(const std::string& name, const std::string& host, uint16_t port,
                                   uint32_t connections, uint64_t ops,
                                   const std::function<std::string(uint64_t)>& request) {
  std::vector<HttpConnection> conns(connections);
  const int ep = ::epoll_create1(0);
  for (uint32_t c = 0; c < connections; ++c) {
    auto fd = Dial(host, port);
    if (!fd.ok()) {
      for (auto& k : conns) {
        if (k.fd >= 0) ::close(k.fd);
      }
      ::close(ep);
      return fd.status();
    }
    conns[c].fd = *fd;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = c;
    ::epoll_ctl(ep, EPOLL_CTL_ADD, *fd, &ev);
  }
  // Requests made up front: the loop below only moves bytes.
  std::vector<std::string> requests(ops);
  for (uint64_t i = 0; i < ops; ++i) requests[i] = request(i);
  std::vector<double> micros;
  micros.reserve(ops);
  uint64_t next = 0, done = 0, errors = 0;
  Status failure;
  auto send_next = [&](HttpConnection& k) {
    if (next >= ops) return;
    k.out = std::move(requests[next++]);
    k.sent = 0;
    k.busy = true;
    k.started = SteadyClock::now();
    while (k.sent < k.out.size()) {
      const ssize_t n = ::send(k.fd, k.out.data() + k.sent, k.out.size() - k.sent, MSG_NOSIGNAL);
      if (n <= 0) {
        failure = Status::IOError("HTTP send failed: " + std::string(std::strerror(errno)));
        return;
      }
      k.sent += static_cast<size_t>(n);
    }
  };
  const auto start = SteadyClock::now();
  for (auto& k : conns) send_next(k);
  epoll_event events[256];
  char buf[65536];
  while (done < ops && failure.ok()) {
    const int n = ::epoll_wait(ep, events, 256, 10000);
    if (n <= 0) {
      failure = Status::IOError("HTTP replies stopped coming (10 s)");
      break;
    }
    for (int e = 0; e < n; ++e) {
      HttpConnection& k = conns[events[e].data.u32];
      const ssize_t got = ::recv(k.fd, buf, sizeof buf, 0);
      if (got <= 0) {
        failure = Status::IOError("the HTTP port closed a connection");
        break;
      }
      k.in.append(buf, static_cast<size_t>(got));
      int status = 0;
      while (size_t whole = WholeReply(k.in, &status)) {
        micros.push_back(
            std::chrono::duration<double, std::micro>(SteadyClock::now() - k.started).count());
        errors += status == 200 ? 0 : 1;
        ++done;
        k.in.erase(0, whole);
        k.busy = false;
        send_next(k);
      }
    }
  }
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  for (auto& k : conns) ::close(k.fd);
  ::close(ep);
  if (!failure.ok()) return failure;
  return Summarize(name, ops, seconds, std::move(micros),
                   std::to_string(connections) + " connections" +
                       (errors > 0 ? ", " + std::to_string(errors) + " error replies" : ""));
}

Result<WorkloadResult> RunConcurrentCalls(
    const std::string& name, const net::ClientOptions& options, uint32_t connections, uint64_t ops,
    const std::function<void(net::Client&, uint64_t)>& queue) {
  std::vector<std::unique_ptr<net::Client>> clients;
  for (uint32_t c = 0; c < connections; ++c) {
    auto client = net::Client::Connect(options);
    if (!client.ok()) return client.status();
    clients.push_back(std::move(*client));
  }
  std::atomic<uint64_t> next{0}, errors{0};
  std::mutex mu;
  std::vector<double> micros;
  micros.reserve(ops);
  Status failure;
  std::vector<std::thread> threads;
  const auto start = SteadyClock::now();
  for (auto& client : clients) {
    threads.emplace_back([&, c = client.get()] {
      std::vector<double> mine;
      for (uint64_t i; (i = next.fetch_add(1)) < ops;) {
        queue(*c, i);
        const auto t0 = SteadyClock::now();
        auto replies = c->Flush();
        mine.push_back(std::chrono::duration<double, std::micro>(SteadyClock::now() - t0).count());
        if (!replies.ok()) {
          std::lock_guard lock(mu);
          failure = replies.status();
          return;
        }
        for (const auto& r : *replies) errors += r.status.ok() ? 0 : 1;
      }
      std::lock_guard lock(mu);
      micros.insert(micros.end(), mine.begin(), mine.end());
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  if (!failure.ok()) return failure;
  return Summarize(name, ops, seconds, std::move(micros),
                   std::to_string(connections) + " connections" +
                       (errors > 0 ? ", " + std::to_string(errors.load()) + " error replies" : ""));
}

}  // namespace relgraph::bench
