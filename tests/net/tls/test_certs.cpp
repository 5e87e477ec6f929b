#include "tests/net/tls/test_certs.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace relgraph::testing {
namespace {

void Require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "test certificates: %s failed\n", what);
    std::abort();
  }
}

EVP_PKEY* NewKey() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  Require(key != nullptr, "EVP_EC_gen");
  return key;
}

void AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  Require(ext != nullptr, "X509V3_EXT_conf_nid");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

enum class Kind { kCa, kServer, kClient };

// A certificate for `key` with subject CN=cn, signed by issuer_key (issuer: nullptr for a
// self-signed CA), valid from now + from_days to now + to_days.
X509* MakeCert(EVP_PKEY* key, const std::string& cn, X509* issuer, EVP_PKEY* issuer_key, Kind kind,
               long from_days, long to_days) {
  static long serial = 1;
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial++ + (std::rand() & 0xffff) * 1000);
  X509_gmtime_adj(X509_getm_notBefore(cert), from_days * 86400);
  X509_gmtime_adj(X509_getm_notAfter(cert), to_days * 86400);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("relgraph tests"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert, issuer != nullptr ? X509_get_subject_name(issuer) : name);
  X509* ctx_issuer = issuer != nullptr ? issuer : cert;
  switch (kind) {
    case Kind::kCa:
      AddExtension(cert, ctx_issuer, NID_basic_constraints, "critical,CA:TRUE");
      AddExtension(cert, ctx_issuer, NID_key_usage, "critical,keyCertSign,cRLSign");
      AddExtension(cert, ctx_issuer, NID_subject_key_identifier, "hash");
      break;
    case Kind::kServer:
      AddExtension(cert, ctx_issuer, NID_basic_constraints, "critical,CA:FALSE");
      AddExtension(cert, ctx_issuer, NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1");
      AddExtension(cert, ctx_issuer, NID_ext_key_usage, "serverAuth,clientAuth");
      break;
    case Kind::kClient:
      AddExtension(cert, ctx_issuer, NID_basic_constraints, "critical,CA:FALSE");
      AddExtension(cert, ctx_issuer, NID_ext_key_usage, "clientAuth");
      break;
  }
  Require(X509_sign(cert, issuer_key != nullptr ? issuer_key : key, EVP_sha256()) > 0, "X509_sign");
  return cert;
}

void WriteCert(const std::string& path, X509* cert) {
  FILE* f = std::fopen(path.c_str(), "w");
  Require(f != nullptr, "fopen");
  Require(PEM_write_X509(f, cert) == 1, "PEM_write_X509");
  std::fclose(f);
}

void WriteKey(const std::string& path, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  Require(f != nullptr, "fopen");
  Require(PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
          "PEM_write_PrivateKey");
  std::fclose(f);
}

X509* ReadCert(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  Require(f != nullptr, "fopen");
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  Require(cert != nullptr, "PEM_read_X509");
  return cert;
}

EVP_PKEY* ReadKey(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "r");
  Require(f != nullptr, "fopen");
  EVP_PKEY* key = PEM_read_PrivateKey(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  Require(key != nullptr, "PEM_read_PrivateKey");
  return key;
}

CertFiles Issue(const std::string& dir, const std::string& file, const std::string& cn, X509* ca,
                EVP_PKEY* ca_key, Kind kind, long from_days, long to_days) {
  EVP_PKEY* key = NewKey();
  X509* cert = MakeCert(key, cn, ca, ca_key, kind, from_days, to_days);
  CertFiles files{dir + "/" + file + ".crt", dir + "/" + file + ".key"};
  WriteCert(files.cert, cert);
  WriteKey(files.key, key);
  X509_free(cert);
  EVP_PKEY_free(key);
  return files;
}

CertFiles IssueSigned(const TestPki& pki, const std::string& file, const std::string& name,
                      Kind kind) {
  X509* ca = ReadCert(pki.ca);
  EVP_PKEY* ca_key = ReadKey(pki.ca_key);
  CertFiles files = Issue(pki.dir, file, name, ca, ca_key, kind, -1, 30);
  X509_free(ca);
  EVP_PKEY_free(ca_key);
  return files;
}

}  // namespace

TestPki MakeTestPki(const std::string& dir) {
  std::filesystem::create_directories(dir);
  TestPki pki;
  pki.dir = dir;
  EVP_PKEY* ca_key = NewKey();
  X509* ca = MakeCert(ca_key, "relgraph test CA", nullptr, nullptr, Kind::kCa, -1, 30);
  pki.ca = dir + "/ca.crt";
  pki.ca_key = dir + "/ca.key";
  WriteCert(pki.ca, ca);
  WriteKey(pki.ca_key, ca_key);
  pki.server = Issue(dir, "server", "localhost", ca, ca_key, Kind::kServer, -1, 30);
  pki.expired = Issue(dir, "expired", "localhost", ca, ca_key, Kind::kServer, -3, -1);

  EVP_PKEY* rogue_key = NewKey();
  X509* rogue = MakeCert(rogue_key, "rogue CA", nullptr, nullptr, Kind::kCa, -1, 30);
  pki.rogue_ca = dir + "/rogue-ca.crt";
  WriteCert(pki.rogue_ca, rogue);
  pki.rogue_server =
      Issue(dir, "rogue-server", "localhost", rogue, rogue_key, Kind::kServer, -1, 30);
  pki.rogue_client =
      Issue(dir, "rogue-client", "intruder", rogue, rogue_key, Kind::kClient, -1, 30);
  X509_free(rogue);
  EVP_PKEY_free(rogue_key);
  X509_free(ca);
  EVP_PKEY_free(ca_key);
  return pki;
}

CertFiles IssueClientCert(const TestPki& pki, const std::string& name) {
  return IssueSigned(pki, "client-" + name, name, Kind::kClient);
}

CertFiles IssueNodeCert(const TestPki& pki, const std::string& name) {
  return IssueSigned(pki, "node-" + name, name, Kind::kServer);
}

}  // namespace relgraph::testing
