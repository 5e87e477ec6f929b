// ClientRegistry: the clients file's grammar and its errors, who a token or a certificate name
// authenticates as, and the permission text.
#include "net/auth/client_registry.h"

#include <doctest.h>

#include <random>

namespace relgraph::net {
namespace {

TEST_CASE("a clients file: tokens by hash, certificates by name, permissions") {
  const std::string file = "# comment\n\napp   read,write  " + TokenCredential("s3cret-app") +
                           "\nfeeds stream " + TokenCredential("feeds-token") +
                           "  # trailing comment\nreplica-1 replication,read cert\n"
                           "ops all " +
                           TokenCredential("ops-token") + " cert\n";
  auto r = ClientRegistry::Parse(file, "clients", "");
  REQUIRE_MESSAGE(r.ok(), r.status().ToString());
  CHECK(r->requires_auth());
  CHECK(r->size() == 4);
  auto app = r->Authenticate("s3cret-app", "");
  REQUIRE(app.ok());
  CHECK(app->name == "app");
  CHECK(app->permissions == (kPermRead | kPermWrite));
  CHECK(r->Authenticate("feeds-token", "")->permissions == kPermStream);
  CHECK(r->Authenticate("wrong", "").status().code() == Code::kUnauthenticated);
  CHECK(r->Authenticate("", "").status().code() == Code::kUnauthenticated);
  // A certificate name authenticates only a client marked cert.
  CHECK(r->Authenticate("", "replica-1")->name == "replica-1");
  CHECK(r->Authenticate("", "ops")->permissions == kPermAll);
  CHECK(r->Authenticate("", "app").status().code() == Code::kUnauthenticated);
  // A token, when given, decides even with a certificate.
  CHECK(r->Authenticate("s3cret-app", "ops")->name == "app");
  CHECK(r->Authenticate("nope", "ops").status().code() == Code::kUnauthenticated);
  CHECK(r->Find("feeds")->permissions == kPermStream);
  CHECK(!r->Find("nobody"));
}

TEST_CASE("rotating a token: a client with two tokens accepts either") {
  auto r = ClientRegistry::Parse(
      "app read " + TokenCredential("old") + " " + TokenCredential("new") + "\n", "f", "");
  REQUIRE(r.ok());
  CHECK(r->Authenticate("old", "")->name == "app");
  CHECK(r->Authenticate("new", "")->name == "app");
  CHECK(!r->Authenticate("newer", "").ok());
  CHECK(!ClientRegistry::Parse("app read " + TokenCredential("t") + " " + TokenCredential("t"),
                               "f", "")
             .ok());
}

TEST_CASE("--auth-token is one more client holding everything; nothing defined lets all in") {
  auto only_token = ClientRegistry::Parse("", "clients", "tok");
  REQUIRE(only_token.ok());
  CHECK(only_token->Authenticate("tok", "")->permissions == kPermAll);
  CHECK(only_token->Authenticate("tok", "")->name == "auth-token");
  CHECK(!only_token->Authenticate("tok2", "").ok());
  auto open = ClientRegistry::Parse("", "clients", "");
  REQUIRE(open.ok());
  CHECK(!open->requires_auth());
  CHECK(open->Authenticate("anything", "")->permissions == kPermAll);
}

TEST_CASE("a bad line is refused naming the line and what is wrong") {
  const std::string ok_cred = TokenCredential("t");
  struct Case {
    std::string text;
    std::string says;
  } cases[] = {
      {"app read", "NAME PERMISSIONS CREDENTIAL"},
      {"a/b read " + ok_cred, "is not 1-64 letters"},
      {"app read,fly " + ok_cred, "unknown permission \"fly\""},
      {"app read token-sha256:abc", "64 hex digits"},
      {"app read password:x", "unknown credential"},
      {"app read " + ok_cred + "\napp write cert", "defined twice"},
      {"a read " + ok_cred + "\nb write " + ok_cred, "has the token of \"a\""},
      {"auth-token read cert", "defined twice"},
  };
  for (const Case& c : cases) {
    auto r = ClientRegistry::Parse(c.text, "clients.conf", "");
    REQUIRE(!r.ok());
    CHECK(r.status().code() == Code::kInvalidArgument);
    CHECK_MESSAGE(r.status().message().find(c.says) != std::string::npos, r.status().message());
    CHECK(r.status().message().rfind("clients.conf:", 0) == 0);
  }
  CHECK(!ClientRegistry::Load("/nonexistent/clients", "").ok());
}

TEST_CASE("permissions: text round trip and what the refusal says") {
  for (Permissions p = 1; p <= kPermAll; ++p) {
    auto back = ParsePermissions(PermissionsText(p));
    REQUIRE(back.ok());
    CHECK(*back == p);
  }
  const Status denied = PermissionDenied(Opcode::kFollow, "reader", kPermRead);
  CHECK(denied.code() == Code::kPermissionDenied);
  CHECK(denied.message() == "follow needs the write permission; client \"reader\" holds read");
  CHECK(PermissionDenied(Opcode::kFetchSnapshot, "x", kPermRead)
            .message()
            .find("one of stream|replication") != std::string::npos);
}

TEST_CASE("random tokens: each authenticates as its own client only") {
  std::mt19937_64 rng(3);
  std::string file;
  std::vector<std::string> tokens;
  for (int i = 0; i < 50; ++i) {
    tokens.push_back(std::to_string(rng()) + std::to_string(rng()));
    file += "c" + std::to_string(i) + " read " + TokenCredential(tokens.back()) + "\n";
  }
  auto r = ClientRegistry::Parse(file, "f", "");
  REQUIRE(r.ok());
  for (int i = 0; i < 50; ++i) {
    CHECK(r->Authenticate(tokens[i], "")->name == "c" + std::to_string(i));
    CHECK(!r->Authenticate(tokens[i] + "x", "").ok());
    CHECK(!r->Authenticate(tokens[i].substr(1), "").ok());
  }
}

}  // namespace
}  // namespace relgraph::net
