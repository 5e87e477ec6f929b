// relgraph-cli [-h HOST] [-p PORT] [-a TOKEN] [--json] [COMMAND ARGS...]
// relgraph-cli --cluster=nats://HOST:PORT [...]: through a cluster's shard map (docs/cluster.md).
//
// With a command: runs it once, prints the reply, exits 0 (1 on an error reply or a connection
// failure, 2 on bad usage: an unknown command or option, a missing or malformed argument). Without
// one: an interactive session reading commands from stdin. `subscribe` prints the change stream as
// it comes, like tail -f.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "net/client/client.h"
#include "net/client/event_format.h"
#include "net/cluster/nats_link.h"
#include "net/tls/tls_flags.h"
#include "relgraph_version.h"
#include "tools/cli/cli_commands.h"

namespace relgraph::cli {
namespace {

void PrintUsage() {
  std::printf(
      "usage: relgraph-cli [-h HOST] [-p PORT] [-a TOKEN] [--json] [COMMAND ARGS...]\n"
      "       relgraph-cli --cluster=nats://HOST:PORT[,...] [-a TOKEN] [--json] [COMMAND ARGS...]\n"
      "       relgraph-cli --help | -h | --version\n"
      "  defaults: -h 127.0.0.1 -p 7707; RELGRAPH_TOKEN supplies -a\n"
      "  --timeout-ms=N: how long a command waits for its reply (default 30000; snapshot,\n"
      "    which takes minutes on a graph of hundreds of millions of edges: 3600000)\n"
      "  without a command: an interactive session ('help', 'quit')\n"
      "  exit status: 0 done, 1 an error from the server or the connection, 2 bad usage\n"
      "TLS (docs/security.md; RELGRAPH_TLS_CA, RELGRAPH_TLS_CERT and RELGRAPH_TLS_KEY supply\n"
      "  --tls-ca, --tls-cert and --tls-key):\n%s%s"
      "\ncommands:\n%s",
      net::kTlsFlagsHelp, net::kNatsTlsFlagsHelp, CommandUsage().c_str());
}

// Reads commands from stdin until EOF or 'quit', printing each reply through `run`; after a
// failure that broke the connection, `reconnect` (false: give up). Returns 1 when any command
// failed, else 0.
int Interactive(const std::string& prompt,
                const std::function<Result<std::string>(const std::vector<std::string>&)>& run,
                const std::function<bool()>& reconnect, bool json) {
  const bool tty = isatty(0);
  std::string line;
  int status = 0;
  for (;;) {
    if (tty) std::printf("relgraph %s> ", prompt.c_str());
    std::fflush(stdout);
    if (!std::getline(std::cin, line)) break;
    std::istringstream in(line);
    std::vector<std::string> cmd;
    for (std::string w; in >> w;) cmd.push_back(w);
    if (cmd.empty()) continue;
    if (cmd[0] == "quit" || cmd[0] == "exit") break;
    if (cmd[0] == "help") {
      std::fputs(CommandUsage().c_str(), stdout);
      continue;
    }
    auto out = run(cmd);
    if (out.ok()) {
      std::fputs(out->c_str(), stdout);
    } else {
      std::fputs(FormatError(out.status(), json).c_str(), stdout);
      status = 1;
      // A broken connection cannot serve the next line: reconnect once.
      if ((out.status().code() == Code::kIOError || out.status().code() == Code::kTimeout ||
           out.status().code() == Code::kUnavailable) &&
          !reconnect()) {
        return 1;
      }
    }
  }
  return status;
}

// Prints a one-shot command's reply; the exit status (0, 1 on an error reply, 2 on bad usage).
int PrintOnce(const Result<std::string>& out, bool json) {
  if (!out.ok()) {
    std::fputs(FormatError(out.status(), json).c_str(), json ? stdout : stderr);
    return IsUsageError(out.status()) ? 2 : 1;
  }
  std::fputs(out->c_str(), stdout);
  return 0;
}

// relgraph-cli --cluster=nats://HOST:PORT: commands through ClusterClient.
int ClusterMain(const std::string& url, const net::ClientOptions& options,
                const std::vector<std::string>& words, bool json) {
  net::ClusterClientOptions o;
  o.nats_url = url;
  o.client = options;
  auto cluster = net::ClusterClient::Connect(o);
  if (!cluster.ok()) {
    std::fprintf(stderr, "relgraph-cli: cannot reach the cluster at %s: %s\n", url.c_str(),
                 cluster.status().ToString().c_str());
    return 1;
  }
  auto run = [&](const std::vector<std::string>& cmd) {
    return RunClusterCommand(**cluster, cmd, json);
  };
  if (!words.empty()) return PrintOnce(run(words), json);
  // ClusterClient reconnects to a shard by itself.
  return Interactive(
      url, run, [] { return true; }, json);
}

// Set by SIGINT and SIGTERM while subscribed: the stream stops, ACKs its cursor, and exits 0.
std::atomic<bool> g_stop_subscription{false};

// `subscribe`: prints events as they come until --count is reached or the process is
// stopped; resumes by itself after a dropped connection. 0, or 1 when the stream ended with
// an error (lsn_expired, ...), 2 on bad usage.
int Subscribe(const net::ClientOptions& client, const std::vector<std::string>& words, bool json) {
  auto args = ParseSubscribe(words);
  if (!args.ok()) {
    std::fputs(FormatError(args.status(), json).c_str(), json ? stdout : stderr);
    return 2;
  }
  args->options.client = client;
  // Reconnecting is for a stream that was running: a server that is not there at all is an
  // error now, not a wait forever.
  auto first = net::Client::Connect(client);
  if (!first.ok()) {
    std::fprintf(stderr, "relgraph-cli: cannot connect to %s:%u: %s\n", client.host.c_str(),
                 static_cast<unsigned>(client.port), first.status().ToString().c_str());
    return 1;
  }
  if (!args->options.name.empty()) {
    // Resume from the cursor when it exists; a new one starts at --from and is created by the
    // first ACK.
    auto cursors = (*first)->Cursors();
    if (!cursors.ok()) {
      std::fputs(FormatError(cursors.status(), json).c_str(), json ? stdout : stderr);
      return 1;
    }
    for (const net::CursorEntry& k : *cursors) {
      if (k.name == args->options.name) {
        args->options.from = net::SubscribeFrom::kCursor;
        args->options.lsn = 0;
      }
    }
    args->options.ack_interval = std::chrono::milliseconds(1000);
  }
  uint64_t seen = 0;
  std::signal(SIGINT, [](int) { g_stop_subscription = true; });
  std::signal(SIGTERM, [](int) { g_stop_subscription = true; });
  net::SubscriberEvents hooks;
  hooks.on_retry = [](const Status& why, std::chrono::milliseconds wait) {
    std::fprintf(stderr, "relgraph-cli: %s; reconnecting in %lld ms\n", why.ToString().c_str(),
                 static_cast<long long>(wait.count()));
  };
  const Status s = net::Subscribe(
      args->options,
      [&](const net::WireEvent& e) {
        std::fputs((json ? net::EventJson(e) : net::EventText(e)).c_str(), stdout);
        std::fflush(stdout);
        return args->count == 0 || ++seen < args->count;
      },
      &g_stop_subscription, hooks);
  if (!s.ok()) {
    std::fputs(FormatError(s, json).c_str(), json ? stdout : stderr);
    return 1;
  }
  return 0;
}

int Main(int argc, char** argv) {
  net::ClientOptions options;
  if (const char* token = std::getenv("RELGRAPH_TOKEN")) options.token = token;
  // The environment's TLS files, so that a shell sets them once; flags win.
  for (auto [variable, file] : {std::pair{"RELGRAPH_TLS_CA", &options.tls.ca_file},
                                std::pair{"RELGRAPH_TLS_CERT", &options.tls.cert_file},
                                std::pair{"RELGRAPH_TLS_KEY", &options.tls.key_file}}) {
    if (const char* value = std::getenv(variable); value != nullptr && *value != '\0') {
      options.tls.enabled = true;
      *file = value;
    }
  }
  bool json = false;
  net::NatsTlsOptions nats_tls;  // --cluster's NATS over TLS
  std::string cluster;  // nats://HOST:PORT: commands go through the cluster's shard map
  std::vector<std::string> words;
  bool timeout_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (!words.empty()) {
      words.push_back(a);
    } else if (a == "--help" || (a == "-h" && !has_value)) {  // a lone -h names no host
      PrintUsage();
      return 0;
    } else if (a == "--version") {
      std::printf("relgraph-cli %s\n", kVersion);
      return 0;
    } else if (a == "--json") {
      json = true;
    } else if (a.rfind("--cluster=", 0) == 0) {
      cluster = a.substr(10);
    } else if (a.rfind("--timeout-ms=", 0) == 0) {
      const std::string value = a.substr(13);
      char* end = nullptr;
      const unsigned long long ms = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || value[0] == '-' || *end != '\0' || ms == 0 || ms > 86'400'000) {
        std::fprintf(stderr,
                     "relgraph-cli: --timeout-ms takes milliseconds in [1, 86400000], not '%s'\n",
                     value.c_str());
        return 2;
      }
      options.io_timeout = std::chrono::milliseconds(ms);
      timeout_given = true;
    } else if (a == "-h" && has_value) {
      options.host = argv[++i];
    } else if (a == "-a" && has_value) {
      options.token = argv[++i];
    } else if (a == "-p" && has_value) {
      std::string host;
      uint16_t port = 0;
      if (!net::ParseHostPort(std::string("x:") + argv[++i], &host, &port).ok()) {
        std::fprintf(stderr, "relgraph-cli: bad port '%s'\n", argv[i]);
        return 2;
      }
      options.port = port;
    } else if (auto tls = net::ApplyTlsFlag(a, &options.tls); !tls.ok() || *tls) {
      if (!tls.ok()) {
        std::fprintf(stderr, "relgraph-cli: %s\n", tls.status().message().c_str());
        return 2;
      }
    } else if (auto nats = net::ApplyNatsTlsFlag(a, &nats_tls); !nats.ok() || *nats) {
      if (!nats.ok()) {
        std::fprintf(stderr, "relgraph-cli: %s\n", nats.status().message().c_str());
        return 2;
      }
    } else if (a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "relgraph-cli: unknown option '%s' (see --help)\n", a.c_str());
      return 2;
    } else {
      words.push_back(a);
    }
  }

  if (!words.empty() && words[0] == "help") {  // needs no server
    PrintUsage();
    return 0;
  }
  // A snapshot writes the whole graph before it answers: 100 s at 500M edges.
  if (!timeout_given && !words.empty() && words[0] == "snapshot")
    options.io_timeout = std::chrono::hours(1);
  net::SetNatsTls(nats_tls);
  if (!cluster.empty()) {
    if (!words.empty() && words[0] == "subscribe") {
      std::fprintf(stderr,
                   "relgraph-cli: subscribe follows one shard's stream: use -p, not "
                   "--cluster\n");
      return 2;
    }
    return ClusterMain(cluster, options, words, json);
  }
  if (!words.empty() && words[0] == "subscribe") return Subscribe(options, words, json);
  auto client = net::Client::Connect(options);
  if (!client.ok()) {
    std::fprintf(stderr, "relgraph-cli: cannot connect to %s:%u: %s\n", options.host.c_str(),
                 static_cast<unsigned>(options.port), client.status().ToString().c_str());
    return 1;
  }
  if (!words.empty()) {
    // A write sent to a replica is refused with its primary's address: send it there (a
    // group's election may name none for a moment: ask again shortly).
    Result<std::string> out = RunCommand(**client, words, json);
    for (int hop = 0; hop < 20 && !out.ok() && out.status().code() == Code::kReadOnly; ++hop) {
      const std::string primary = out.status().message();
      if (primary.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
      } else {
        net::ParseHostPort(primary, &options.host, &options.port).IgnoreError();
        std::fprintf(stderr, "relgraph-cli: a replica; sending to the primary %s\n",
                     primary.c_str());
      }
      auto next = net::Client::Connect(options);
      if (!next.ok()) break;
      *client = std::move(*next);
      out = RunCommand(**client, words, json);
    }
    return PrintOnce(out, json);
  }
  std::unique_ptr<net::Client> connection = std::move(*client);
  return Interactive(
      options.host + ":" + std::to_string(options.port),
      [&](const std::vector<std::string>& cmd) { return RunCommand(*connection, cmd, json); },
      [&] {
        auto again = net::Client::Connect(options);
        if (!again.ok()) {
          std::fprintf(stderr, "relgraph-cli: reconnect failed: %s\n",
                       again.status().ToString().c_str());
          return false;
        }
        connection = std::move(*again);
        return true;
      },
      json);
}

}  // namespace
}  // namespace relgraph::cli

int main(int argc, char** argv) {
  return relgraph::cli::Main(argc, argv);
}
