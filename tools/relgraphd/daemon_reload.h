// relgraphd's reload on SIGHUP: the command line is read again (its --config file first, so
// flags still win), the settings that can change live are applied, every change is logged
// ("reload: slowlog-us 10000 -> 500"), a change to any other setting is logged as needing a
// restart and not applied, and a file that does not parse is logged and changes nothing.
//
// Live: log-level, log-format, slowlog-us, slowlog-max-len, max-connections (open connections
// past a lowered limit stay), idle-timeout-ms and send-timeout-ms. Everything else (the listen
// address, the data directory, fsync, io threads, max-frame, the token, replication and
// cluster settings, the engine's limits) is read once at start.
//
// Thread-safety: DiffReload is pure. SighupReloader runs its own thread, which is the only one
// that applies reloads; construct it before starting other threads (it blocks SIGHUP in the
// constructing thread, whose mask they inherit).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "net/server/server.h"
#include "tools/relgraphd/daemon_config.h"

namespace relgraph {

// The keys a reload applies.
bool LiveSetting(const std::string& key);

struct ReloadPlan {
  std::vector<std::string> log;  // one line per change, in key order
  bool applies = false;          // some live setting changed
};
// What going from `before` to `after` (their `given` keys) changes.
ReloadPlan DiffReload(const DaemonConfig& before, const DaemonConfig& after);

// Applies the live settings of `c`: the log's and the server's.
void ApplyLiveSettings(const DaemonConfig& c, net::Server* server);

class SighupReloader {
 public:
  // Blocks SIGHUP for this thread (and the threads it starts from now on).
  SighupReloader();
  ~SighupReloader() { Stop(); }
  // Waits for SIGHUP on its thread; each one re-parses `args` and applies what changed
  // from the settings in force (starting as `config`). REQUIRES: `server` outlives Stop().
  void Start(std::vector<std::string> args, DaemonConfig config, net::Server* server);
  void Stop();
  // Also run on each SIGHUP, after the server took the new certificates and clients (the
  // HTTP port's TLS); an error keeps the old ones everywhere it can. Before Start.
  void OnSecurityReload(std::function<Status(const DaemonConfig&)> fn) {
    on_security_reload_ = std::move(fn);
  }

 private:
  void Loop(std::vector<std::string> args, DaemonConfig config, net::Server* server);
  // Reads the TLS files and the clients file of `next` again; false (logged) on an error.
  bool ReloadSecurity(const DaemonConfig& next, net::Server* server);
  std::function<Status(const DaemonConfig&)> on_security_reload_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace relgraph
