// relgraph-cli [-h HOST] [-p PORT] [-a TOKEN] [--json] [COMMAND ARGS...]
//
// With a command: runs it once, prints the reply, exits 0 (1 on an error reply or a connection
// failure, 2 on bad usage). Without one: an interactive session reading commands from stdin.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "net/client/client.h"
#include "tools/cli/cli_commands.h"

namespace relgraph::cli {
namespace {

void PrintUsage() {
  std::printf(
      "usage: relgraph-cli [-h HOST] [-p PORT] [-a TOKEN] [--json] [COMMAND ARGS...]\n"
      "  defaults: -h 127.0.0.1 -p 7707; RELGRAPH_TOKEN supplies -a\n"
      "  without a command: an interactive session ('help', 'quit')\n\ncommands:\n%s",
      CommandUsage().c_str());
}

// Reads commands from stdin until EOF or 'quit', printing each reply; reconnects once after a
// broken connection. Returns 1 when any command failed, else 0.
int Interactive(std::unique_ptr<net::Client> client, const net::ClientOptions& options,
                bool json) {
  const bool tty = isatty(0);
  std::string line;
  int status = 0;
  for (;;) {
    if (tty) std::printf("relgraph %s:%u> ", options.host.c_str(), unsigned{options.port});
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
    auto out = RunCommand(*client, cmd, json);
    if (out.ok()) {
      std::fputs(out->c_str(), stdout);
    } else {
      std::fputs(FormatError(out.status(), json).c_str(), stdout);
      status = 1;
      // A broken connection cannot serve the next line: reconnect once.
      if (out.status().code() == Code::kIOError || out.status().code() == Code::kTimeout ||
          out.status().code() == Code::kUnavailable) {
        auto again = net::Client::Connect(options);
        if (!again.ok()) {
          std::fprintf(stderr, "relgraph-cli: reconnect failed: %s\n",
                       again.status().ToString().c_str());
          return 1;
        }
        client = std::move(*again);
      }
    }
  }
  return status;
}

int Main(int argc, char** argv) {
  net::ClientOptions options;
  if (const char* token = std::getenv("RELGRAPH_TOKEN")) options.token = token;
  bool json = false;
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (!words.empty()) {
      words.push_back(a);
    } else if (a == "--help") {
      PrintUsage();
      return 0;
    } else if (a == "--json") {
      json = true;
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
  auto client = net::Client::Connect(options);
  if (!client.ok()) {
    std::fprintf(stderr, "relgraph-cli: cannot connect to %s:%u: %s\n", options.host.c_str(),
                 static_cast<unsigned>(options.port), client.status().ToString().c_str());
    return 1;
  }
  if (!words.empty()) {
    auto out = RunCommand(**client, words, json);
    if (!out.ok()) {
      std::fputs(FormatError(out.status(), json).c_str(), json ? stdout : stderr);
      return out.status().code() == Code::kInvalidArgument &&
                     out.status().message().rfind("usage:", 0) == 0
                 ? 2
                 : 1;
    }
    std::fputs(out->c_str(), stdout);
    return 0;
  }

  return Interactive(std::move(*client), options, json);
}

}  // namespace
}  // namespace relgraph::cli

int main(int argc, char** argv) {
  return relgraph::cli::Main(argc, argv);
}
