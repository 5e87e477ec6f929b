// The text form of a group's records: what is written reads back equal (random values), unknown
// keys are ignored (a newer node may add some), damaged values are errors naming the key.
#include "net/group/group_records.h"

#include <doctest.h>

#include <random>

namespace relgraph::net {
namespace {

std::string RandomAddress(std::mt19937_64& rng) {
  return "10.0." + std::to_string(rng() % 256) + "." + std::to_string(rng() % 256) + ":" +
         std::to_string(1 + rng() % 65535);
}

TEST_CASE("group records: random leases, members and switchovers read back equal") {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    GroupLease l;
    l.holder = RandomAddress(rng);
    l.epoch = rng();
    l.epoch_id = rng();
    l.sync_replicas = static_cast<uint32_t>(rng() % 17);
    for (uint64_t k = rng() % 5; k > 0; --k) l.members.push_back(RandomAddress(rng));
    l.renewals = rng();
    l.renewed_ms = static_cast<int64_t>(rng() >> 1);
    l.handover = rng() % 2 == 0;
    l.released = rng() % 2 == 0;
    auto back = ParseGroupLease(FormatGroupLease(l));
    REQUIRE(back.ok());
    CHECK(*back == l);

    GroupMember m;
    m.address = RandomAddress(rng);
    m.role = rng() % 2 == 0 ? "primary" : "replica";
    m.epoch = rng();
    m.epoch_id = rng();
    m.applied_lsn = rng();
    m.durable_lsn = rng();
    m.state = rng() % 2 == 0 ? "streaming" : "connecting";
    m.link_alive = rng() % 2 == 0;
    m.lapsed_revision = rng();
    m.reported_ms = static_cast<int64_t>(rng() >> 1);
    auto mb = ParseGroupMember(FormatGroupMember(m));
    REQUIRE(mb.ok());
    CHECK(*mb == m);

    GroupSwitchover s{rng() % 3 == 0 ? "" : RandomAddress(rng), static_cast<int64_t>(rng() >> 1)};
    auto sb = ParseGroupSwitchover(FormatGroupSwitchover(s));
    REQUIRE(sb.ok());
    CHECK(*sb == s);
  }
}

TEST_CASE("group records: unknown keys are ignored, damage is named") {
  auto l = ParseGroupLease("holder=a:1\nepoch=3\nfuture_key=whatever\n\n");
  REQUIRE(l.ok());
  CHECK(l->holder == "a:1");
  CHECK(l->epoch == 3);
  CHECK(l->members.empty());

  auto bad = ParseGroupLease("holder=a:1\nepoch=three\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == Code::kCorruption);
  CHECK(bad.status().message().find("epoch=three") != std::string::npos);
  CHECK_FALSE(ParseGroupLease("epoch=3\n").ok());                    // no holder
  CHECK_FALSE(ParseGroupLease("holder=a:1\nnot a line\n").ok());     // not key=value
  CHECK_FALSE(ParseGroupLease("holder=a:1\nhandover=2\n").ok());     // not a bool
  CHECK_FALSE(ParseGroupMember("address=a:1\nrole=leader\n").ok());  // no such role
  CHECK_FALSE(ParseGroupMember("role=replica\n").ok());              // no address
  CHECK_FALSE(ParseGroupMember("address=a:1\napplied_lsn=-1\n").ok());
}

TEST_CASE("group records: names and keys") {
  CHECK(CheckGroupName("g1").ok());
  CHECK(CheckGroupName("users_eu-west").ok());
  CHECK_FALSE(CheckGroupName("").ok());
  CHECK_FALSE(CheckGroupName("a.b").ok());  // a key-value token separator
  CHECK_FALSE(CheckGroupName("a b").ok());
  CHECK_FALSE(CheckGroupName(std::string(65, 'x')).ok());
  CHECK(LeaseKey("g") == "g.lease");
  CHECK(MemberKey("g", "10.0.0.1:7707") == "g.member.10-0-0-1_7707");
  CHECK(MemberKey("g", "10.0.0.1:7707").rfind(MemberKeyPrefix("g"), 0) == 0);
  CHECK(SwitchoverKey("g") == "g.switchover");
}

}  // namespace
}  // namespace relgraph::net
