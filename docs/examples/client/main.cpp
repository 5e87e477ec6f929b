// An application server's side: talks to a running relgraphd, links nothing of the engine.
// Usage: relgraph-client-example HOST:PORT
#include <cstdio>

#include "net/client/client.h"

int main(int argc, char** argv) {
  relgraph::net::ClientOptions options;
  if (argc > 1) (void)relgraph::net::ParseHostPort(argv[1], &options.host, &options.port);
  auto client = relgraph::net::Client::Connect(options);
  if (!client.ok()) return std::fprintf(stderr, "%s\n", client.status().ToString().c_str()), 1;
  if (auto f = (*client)->Follow(1, 2); !f.ok()) return std::puts(f.status().ToString().c_str()), 1;
  auto counts = (*client)->Counts(2);
  if (!counts.ok()) return std::fprintf(stderr, "%s\n", counts.status().ToString().c_str()), 1;
  std::printf("user 2 has %u fans\n", counts->fans);
  return 0;
}
