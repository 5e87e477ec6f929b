// Why this design: the reload reads the same command line the same way a start does
// (ParseDaemonConfig), so a file and a flag mean on SIGHUP what they mean at start, and it
// compares the keys as given rather than every parsed field, so a new key needs no code here
// unless it is live. The signal is taken with sigtimedwait on one thread (blocked everywhere
// else), so the reload runs as ordinary code, not in a signal handler.
#include "tools/relgraphd/daemon_reload.h"

#include <signal.h>

#include <set>

#include "tools/relgraphd/daemon_log.h"

namespace relgraph {
namespace {

const std::set<std::string>& LiveKeys() {
  static const std::set<std::string> keys = {
      "log-level",       "log-format",      "slowlog-us",     "slowlog-max-len",
      "max-connections", "idle-timeout-ms", "send-timeout-ms", "tls-cert",
      "tls-key",         "tls-ca",          "tls-require-client-cert", "clients-file",
      "auth-token",      "auth-token-file"};
  return keys;
}

// The keys whose files every SIGHUP reads again, changed or not (ReloadSecurity).
bool SecurityKey(const std::string& key) {
  return key.rfind("tls-", 0) == 0 || key == "clients-file" || key.rfind("auth-token", 0) == 0;
}

// The value in force of live setting `key` in `c`, as text.
std::string LiveValue(const DaemonConfig& c, const std::string& key) {
  if (key == "log-level") return std::string(LogLevelName(c.log_level));
  if (key == "log-format") return std::string(LogFormatName(c.log_format));
  if (key == "slowlog-us") return std::to_string(c.server.slowlog_us);
  if (key == "slowlog-max-len") return std::to_string(c.server.slowlog_max_len);
  if (key == "max-connections") return std::to_string(c.server.max_connections);
  if (key == "idle-timeout-ms") return std::to_string(c.server.idle_timeout.count());
  if (key == "send-timeout-ms") return std::to_string(c.server.send_timeout.count());
  if (SecurityKey(key)) {
    auto it = c.given.find(key);
    if (key.rfind("auth-token", 0) == 0) return it == c.given.end() ? "(none)" : "(set)";
    return it == c.given.end() ? "(default)" : it->second;
  }
  return "";
}

std::string Shown(const std::map<std::string, std::string>& given, const std::string& key) {
  auto it = given.find(key);
  return it == given.end() ? "(default)" : it->second;
}

}  // namespace

bool LiveSetting(const std::string& key) {
  return LiveKeys().contains(key);
}

ReloadPlan DiffReload(const DaemonConfig& before, const DaemonConfig& after) {
  ReloadPlan plan;
  std::set<std::string> keys;
  for (const auto& [k, v] : before.given) keys.insert(k);
  for (const auto& [k, v] : after.given) keys.insert(k);
  for (const std::string& k : keys) {
    if (LiveSetting(k)) {
      const std::string from = LiveValue(before, k), to = LiveValue(after, k);
      if (from == to) continue;
      plan.log.push_back("reload: " + k + " " + from + " -> " + to);
      plan.applies = true;
    } else if (Shown(before.given, k) != Shown(after.given, k)) {
      plan.log.push_back("reload: " + k + " " + Shown(before.given, k) + " -> " +
                         Shown(after.given, k) + " needs a restart: not applied");
    }
  }
  return plan;
}

void ApplyLiveSettings(const DaemonConfig& c, net::Server* server) {
  SetLog(c.log_level, c.log_format);
  server->SetSlowLog(c.server.slowlog_us, c.server.slowlog_max_len);
  server->SetLimits(c.server.max_connections, c.server.idle_timeout, c.server.send_timeout);
}

SighupReloader::SighupReloader() {
  sigset_t hup;
  sigemptyset(&hup);
  sigaddset(&hup, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &hup, nullptr);
}

bool SighupReloader::ReloadSecurity(const DaemonConfig& next, net::Server* server) {
  Status s = server->ReloadSecurity(next.server.tls, next.server.clients_file,
                                    next.server.auth_token);
  if (s.ok() && on_security_reload_) s = on_security_reload_(next);
  if (!s.ok()) {
    Log(LogLevel::kError, "reload: %s: TLS certificates and clients unchanged",
        s.ToString().c_str());
    return false;
  }
  Log(LogLevel::kInfo, "reload: TLS certificates and clients read again%s",
      next.server.tls.enabled() ? "" : " (no TLS)");
  return true;
}

void SighupReloader::Start(std::vector<std::string> args, DaemonConfig config,
                           net::Server* server) {
  thread_ = std::thread([this, args = std::move(args), config = std::move(config), server] {
    Loop(args, config, server);
  });
}

void SighupReloader::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void SighupReloader::Loop(std::vector<std::string> args, DaemonConfig config, net::Server* server) {
  sigset_t hup;
  sigemptyset(&hup);
  sigaddset(&hup, SIGHUP);
  const timespec tick{0, 200'000'000};  // looks at stop_ this often
  while (!stop_) {
    if (sigtimedwait(&hup, nullptr, &tick) != SIGHUP) continue;
    auto next = ParseDaemonConfig(args);
    if (!next.ok()) {
      Log(LogLevel::kError, "reload: %s: nothing changed", next.status().ToString().c_str());
      continue;
    }
    const ReloadPlan plan = DiffReload(config, *next);
    // The lines before applying: a change of the log's own settings shows in the old form.
    for (const std::string& line : plan.log) Log(LogLevel::kInfo, "%s", line.c_str());
    // Certificates and the clients file are read again on every SIGHUP: rotating one is
    // replacing the file and sending the signal, with no key changed.
    const bool secured = ReloadSecurity(*next, server);
    if (!plan.applies && !secured) continue;
    if (secured) {
      config.server.tls = next->server.tls;
      config.server.clients_file = next->server.clients_file;
      config.server.auth_token = next->server.auth_token;
    }
    ApplyLiveSettings(*next, server);
    // What is in force now: the live settings of `next`, the rest as started.
    for (const std::string& k : LiveKeys()) {
      if (SecurityKey(k) && !secured) continue;  // the old files are still in force
      if (auto it = next->given.find(k); it != next->given.end()) {
        config.given[k] = it->second;
      } else {
        config.given.erase(k);
      }
    }
    config.log_level = next->log_level;
    config.log_format = next->log_format;
    config.server.slowlog_us = next->server.slowlog_us;
    config.server.slowlog_max_len = next->server.slowlog_max_len;
    config.server.max_connections = next->server.max_connections;
    config.server.idle_timeout = next->server.idle_timeout;
    config.server.send_timeout = next->server.send_timeout;
  }
}

}  // namespace relgraph
