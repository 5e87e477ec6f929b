// relgraph-bridge [--relgraph=HOST:PORT] [--nats=URL] [--stream=NAME] [--subject-prefix=P]
//                 [--cursor=NAME] [--kinds=K,K,...] [--from=LSN|now] [--token=T]
//
// Carries relgraphd's change stream into NATS JetStream until SIGINT or SIGTERM, each event
// exactly once (docs/change-stream.md, "Into NATS JetStream"). Exit 0 when stopped, 1 on an
// error no reconnect cures, 2 on bad usage.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "net/client/event_format.h"
#include "net/cluster/nats_link.h"
#include "net/tls/tls_flags.h"
#include "relgraph_version.h"
#include "tools/bridge/bridge.h"

namespace relgraph {
namespace {

std::atomic<bool> g_stop{false};

constexpr const char* kUsage = R"(usage: relgraph-bridge [flags]

Carries relgraphd's change stream into a NATS JetStream stream, each event once, with its
LSN as the message id; resumes where it stopped after any crash.

  --relgraph=HOST:PORT   the relgraphd to read                  [127.0.0.1:7707]
  --token=TOKEN          its auth token (or RELGRAPH_TOKEN)
  --tls, --tls-ca=FILE, --tls-cert=FILE, --tls-key=FILE, --tls-server-name=NAME,
  --tls-insecure         reach relgraphd over TLS (docs/security.md)
  --nats-tls-ca=FILE, --nats-tls-cert=FILE, --nats-tls-key=FILE
                         reach NATS over TLS (or give a tls:// URL)
  --nats=URL[,URL...]    the NATS server, or several of one NATS cluster
                                                                [nats://127.0.0.1:4222]
  --stream=NAME          the JetStream stream, created if absent [RELGRAPH]
  --subject-prefix=P     subjects P.follow, P.publish, ...      [relgraph]
  --cursor=NAME          the bridge's named cursor in relgraph  [relgraph-bridge]
  --kinds=K,K,...        event kinds carried                    [all]
  --from=LSN|now         where a new bridge starts              [now]
  --until-lsn=N          carry the events up to LSN N, none after it, leave the cursor
                         at N and exit 0 (a one-off copy)
  --help                 this text
  --version              relgraph-bridge VERSION
)";

int Main(int argc, char** argv) {
  BridgeOptions o;
  net::NatsTlsOptions nats_tls_options;
  if (const char* token = std::getenv("RELGRAPH_TOKEN")) o.relgraph.token = token;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const size_t eq = a.find('=');
    const std::string key = a.substr(0, eq),
                      value = eq == std::string::npos ? "" : a.substr(eq + 1);
    Status bad;
    if (key == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (key == "--version") {
      std::printf("relgraph-bridge %s\n", kVersion);
      return 0;
    } else if (key == "--relgraph") {
      bad = net::ParseHostPort(value, &o.relgraph.host, &o.relgraph.port);
    } else if (key == "--token") {
      o.relgraph.token = value;
    } else if (key == "--nats") {
      o.nats_url = value;
    } else if (key == "--stream") {
      o.stream = value;
    } else if (key == "--subject-prefix") {
      o.subject_prefix = value;
    } else if (key == "--cursor") {
      o.cursor = value;
    } else if (key == "--kinds") {
      auto kinds = net::ParseEventKinds(value);
      if (kinds.ok()) o.kinds = *kinds;
      bad = kinds.status();
    } else if (key == "--until-lsn") {
      char* end = nullptr;
      o.until_lsn = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || o.until_lsn == 0) {
        bad = Status::InvalidArgument("--until-lsn takes an LSN >= 1, not '" + value + "'");
      }
    } else if (key == "--from") {
      char* end = nullptr;
      o.from_lsn = value == "now" ? 0 : std::strtoull(value.c_str(), &end, 10);
      if (value != "now" && (value.empty() || *end != '\0')) {
        bad = Status::InvalidArgument("--from takes an LSN or 'now', not '" + value + "'");
      }
    } else if (auto tls = net::ApplyTlsFlag(a, &o.relgraph.tls); !tls.ok() || *tls) {
      bad = tls.status();
    } else if (auto nats_tls = net::ApplyNatsTlsFlag(a, &nats_tls_options);
               !nats_tls.ok() || *nats_tls) {
      bad = nats_tls.status();
    } else {
      bad = Status::InvalidArgument("unknown flag '" + a + "' (see --help)");
    }
    if (!bad.ok()) {
      std::fprintf(stderr, "relgraph-bridge: %s\n", bad.ToString().c_str());
      return 2;
    }
  }
  net::SetNatsTls(nats_tls_options);
  std::signal(SIGINT, [](int) { g_stop = true; });
  std::signal(SIGTERM, [](int) { g_stop = true; });
  Bridge bridge(o);
  const Status s = bridge.Run(g_stop);
  const BridgeStats stats = bridge.stats();
  std::fprintf(stderr, "relgraph-bridge: %llu events published, last LSN %llu\n",
               static_cast<unsigned long long>(stats.published),
               static_cast<unsigned long long>(stats.last_lsn));
  if (!s.ok()) {
    std::fprintf(stderr, "relgraph-bridge: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace relgraph

int main(int argc, char** argv) {
  return relgraph::Main(argc, argv);
}
