// Test certificates: a throwaway CA, server and client certificates signed by it, a second CA
// nobody trusts and an expired server certificate, written as PEM files (OpenSSL's API, so
// tests need no openssl binary). P-256 keys: fast to make.
#pragma once

#include <string>

namespace relgraph::testing {

struct CertFiles {
  std::string cert;
  std::string key;
};

struct TestPki {
  std::string dir;
  std::string ca;  // the trusted CA's certificate
  std::string ca_key;
  CertFiles server;        // CN=localhost, SAN DNS:localhost, IP:127.0.0.1
  CertFiles expired;       // like server, expired yesterday
  std::string rogue_ca;    // a CA nobody trusts
  CertFiles rogue_server;  // a server certificate signed by it
  CertFiles rogue_client;  // a client certificate (CN=intruder) signed by it
};

// Makes every file above in `dir` (created if missing). Aborts the test on failure.
TestPki MakeTestPki(const std::string& dir);
// A client certificate with subject CN=`name`, signed by the trusted CA, in pki.dir.
CertFiles IssueClientCert(const TestPki& pki, const std::string& name);
// A node's certificate (it serves and connects: serverAuth and clientAuth; SAN localhost and
// 127.0.0.1) with subject CN=`name`, signed by the trusted CA.
CertFiles IssueNodeCert(const TestPki& pki, const std::string& name);

}  // namespace relgraph::testing
