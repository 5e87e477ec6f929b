// libFuzzer target: arbitrary bytes into a server's TLS channel (net/tls/tls_channel.h), as a
// peer at a TLS port would send them: a ClientHello or anything else, split into fragments the
// way a socket may deliver them, with the server's replies taken out between fragments. Half
// the inputs start with a real client's ClientHello, so the fuzzer also reaches the states after
// it. Built with clang only (-DRELGRAPH_FUZZ=ON, see tools/fuzz.sh); any crash, sanitizer
// report, leak or hang is a bug.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "net/tls/tls_channel.h"
#include "tests/net/tls/test_certs.h"

namespace relgraph::net {
namespace {

struct Contexts {
  std::shared_ptr<const TlsContext> server, client;
};

const Contexts& Get() {
  static const Contexts contexts = [] {
    const testing::TestPki pki =
        testing::MakeTestPki("/tmp/relgraph-tls-fuzz-" + std::to_string(getpid()));
    Contexts c;
    TlsServerOptions so{pki.server.cert, pki.server.key, pki.ca, false};
    c.server = *TlsContext::ForServer(so);
    TlsClientOptions co;
    co.enabled = true;
    co.ca_file = pki.ca;
    c.client = *TlsContext::ForClient(co);
    return c;
  }();
  return contexts;
}

std::string ClientHello() {
  auto client = TlsChannel::Create(Get().client, "localhost");
  (*client)->WritePlain("x").IgnoreError();
  std::string hello;
  (*client)->TakeOutput(&hello);
  return hello;
}

}  // namespace
}  // namespace relgraph::net

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace relgraph::net;
  if (size == 0) return 0;
  static const std::string hello = ClientHello();
  std::string input;
  if (data[0] & 1) input = hello;
  input.append(reinterpret_cast<const char*>(data + 1), size - 1);
  auto server = TlsChannel::Create(Get().server);
  const size_t step = 1 + (data[0] >> 1) % 64;
  char plain[1024];
  std::string out;
  for (size_t at = 0; at < input.size(); at += step) {
    (*server)->PutInput(std::string_view(input).substr(at, step));
    auto r = (*server)->ReadPlain(plain);
    out.clear();
    (*server)->TakeOutput(&out);
    if (!r.ok()) break;
  }
  return 0;
}
