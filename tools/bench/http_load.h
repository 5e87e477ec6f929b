// Load over keep-alive connections, one request in flight on each: the JSON API's rows
// (http_follow, http_fans) and, for comparison, the binary protocol's same requests at the
// same concurrency (follow_concurrent, fans_concurrent).
//
// Why this design: a load generator that costs more CPU than the server would measure itself
// on a 2-core machine, so the HTTP side is one thread driving every connection through epoll,
// with each request's bytes made up front and a reply parsed only as far as its status and
// Content-Length. The binary side is the C++ client, one thread per connection, as an
// application would call it. Both time every request (p50/p99).
//
// Thread-safety: each function runs its own threads and returns when they are done.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "net/client/client.h"
#include "storage/status.h"
#include "tools/bench/workloads.h"

namespace relgraph::bench {

// `ops` requests over `connections` connections to host:port; request(i) is request i's whole
// HTTP text. A status other than 200 counts as an error reply (the note says how many).
Result<WorkloadResult> RunHttpLoad(const std::string& name, const std::string& host, uint16_t port,
                                   uint32_t connections, uint64_t ops,
                                   const std::function<std::string(uint64_t)>& request);

// The same over the binary protocol: `connections` clients, each sending one request and
// waiting for its reply; queue(client, i) queues request i.
Result<WorkloadResult> RunConcurrentCalls(const std::string& name,
                                          const net::ClientOptions& options, uint32_t connections,
                                          uint64_t ops,
                                          const std::function<void(net::Client&, uint64_t)>& queue);

}  // namespace relgraph::bench
