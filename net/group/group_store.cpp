#include "net/group/group_store.h"

#include <thread>

#include "net/cluster/nats_link.h"

namespace relgraph::net {

Result<std::unique_ptr<GroupStore>> GroupStore::Connect(const GroupStoreOptions& options) {
  std::unique_ptr<GroupStore> store(new GroupStore());
  store->options_ = options;
  // Any of the servers, moving to another when one hangs (net/cluster/nats_link.h).
  auto nc = ConnectNats(options.nats_urls);
  if (!nc.ok()) return nc.status();
  store->nc_ = *nc;
  natsStatus s = NATS_OK;
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = options.op_timeout.count();
  s = natsConnection_JetStream(&store->js_, store->nc_, &jo);
  if (s != NATS_OK) return NatsError("JetStream context", s);
  s = js_KeyValue(&store->kv_, store->js_, options.bucket.c_str());
  if (s == NATS_NOT_FOUND) {
    kvConfig cfg;
    kvConfig_Init(&cfg);
    cfg.Bucket = options.bucket.c_str();
    cfg.History = 4;
    cfg.StorageType = js_FileStorage;
    cfg.Replicas = options.replicas;
    s = js_CreateKeyValue(&store->kv_, store->js_, &cfg);
    // Another member created it meanwhile: bind it.
    if (s != NATS_OK) s = js_KeyValue(&store->kv_, store->js_, options.bucket.c_str());
  }
  if (s != NATS_OK) return NatsError("key-value bucket " + options.bucket, s);
  return store;
}

GroupStore::~GroupStore() {
  if (lease_watch_ != nullptr) kvWatcher_Destroy(lease_watch_);
  if (kv_ != nullptr) kvStore_Destroy(kv_);
  if (js_ != nullptr) jsCtx_Destroy(js_);
  if (nc_ != nullptr) natsConnection_Destroy(nc_);
}

Result<std::optional<Versioned<std::string>>> GroupStore::Get(const std::string& key) {
  // From the bucket's leader: a lease or report one replica has not stored yet must not
  // read as absent or older (net/cluster/nats_link.h, ReadKvFromLeader).
  auto read = ReadKvFromLeader(js_, options_.bucket, key, "reading " + key);
  if (!read.ok()) return read.status();
  if (!read->has_value()) return std::optional<Versioned<std::string>>();
  return std::optional(Versioned<std::string>{std::move((*read)->value), (*read)->revision});
}

Result<Versioned<GroupLease>> GroupStore::ReadLease(const std::string& group) {
  auto raw = Get(LeaseKey(group));
  if (!raw.ok()) return raw.status();
  if (!raw->has_value()) return Status::NotFound("group " + group + " has no lease");
  auto lease = ParseGroupLease((*raw)->value);
  if (!lease.ok()) return lease.status();
  return Versioned<GroupLease>{std::move(*lease), (*raw)->revision};
}

Result<uint64_t> GroupStore::CreateLease(const std::string& group, const GroupLease& lease) {
  const std::string text = FormatGroupLease(lease);
  uint64_t rev = 0;
  natsStatus s = kvStore_Create(&rev, kv_, LeaseKey(group).c_str(), text.data(),
                                static_cast<int>(text.size()));
  if (WrongRevision(s)) {
    return Status(Code::kAlreadyExists, "group " + group + " has a lease already");
  }
  if (s != NATS_OK) return NatsError("creating group " + group + "'s lease", s);
  return rev;
}

Result<uint64_t> GroupStore::UpdateLease(const std::string& group, const GroupLease& lease,
                                         uint64_t expected) {
  const std::string text = FormatGroupLease(lease);
  uint64_t rev = 0;
  natsStatus s = kvStore_Update(&rev, kv_, LeaseKey(group).c_str(), text.data(),
                                static_cast<int>(text.size()), expected);
  if (WrongRevision(s)) {
    return Status(Code::kAlreadyExists,
                  "group " + group + "'s lease moved past revision " + std::to_string(expected));
  }
  if (s != NATS_OK) return NatsError("updating group " + group + "'s lease", s);
  return rev;
}

Status GroupStore::PutMember(const std::string& group, const GroupMember& member) {
  const std::string text = FormatGroupMember(member);
  uint64_t rev = 0;
  natsStatus s = kvStore_Put(&rev, kv_, MemberKey(group, member.address).c_str(), text.data(),
                             static_cast<int>(text.size()));
  return s == NATS_OK ? Status::OK() : NatsError("reporting member " + member.address, s);
}

Status GroupStore::DeleteMember(const std::string& group, const std::string& address) {
  natsStatus s = kvStore_Delete(kv_, MemberKey(group, address).c_str());
  return s == NATS_OK ? Status::OK() : NatsError("removing member " + address, s);
}

Result<std::vector<Versioned<GroupMember>>> GroupStore::Members(const std::string& group) {
  kvWatcher* w = nullptr;
  kvWatchOptions o;
  kvWatchOptions_Init(&o);
  o.IgnoreDeletes = true;
  o.Timeout = options_.op_timeout.count();
  const std::string filter = MemberKeyPrefix(group) + "*";
  natsStatus s = kvStore_Watch(&w, kv_, filter.c_str(), &o);
  if (s != NATS_OK) return NatsError("listing group " + group + "'s members", s);
  std::vector<Versioned<GroupMember>> out;
  Status result;
  for (;;) {
    kvEntry* e = nullptr;
    s = kvWatcher_Next(&e, w, options_.op_timeout.count());
    if (s != NATS_OK) {
      result = NatsError("listing group " + group + "'s members", s);
      break;
    }
    if (e == nullptr) break;  // every current value was delivered
    auto m = ParseGroupMember(std::string_view(static_cast<const char*>(kvEntry_Value(e)),
                                               static_cast<size_t>(kvEntry_ValueLen(e))));
    if (m.ok()) out.push_back({std::move(*m), kvEntry_Revision(e)});
    kvEntry_Destroy(e);
  }
  kvWatcher_Destroy(w);
  if (!result.ok()) return result;
  return out;
}

bool GroupStore::WaitLeaseChange(const std::string& group, std::chrono::milliseconds timeout) {
  if (lease_watch_ != nullptr && watched_group_ != group) {
    kvWatcher_Destroy(lease_watch_);
    lease_watch_ = nullptr;
  }
  if (lease_watch_ == nullptr) {
    kvWatchOptions o;
    kvWatchOptions_Init(&o);
    o.MetaOnly = true;  // the caller reads the lease itself
    o.Timeout = options_.op_timeout.count();
    if (kvStore_Watch(&lease_watch_, kv_, LeaseKey(group).c_str(), &o) != NATS_OK) {
      lease_watch_ = nullptr;
      std::this_thread::sleep_for(timeout);
      return true;
    }
    watched_group_ = group;
  }
  kvEntry* e = nullptr;
  const natsStatus s = kvWatcher_Next(&e, lease_watch_, timeout.count());
  if (s == NATS_TIMEOUT) return false;
  if (s == NATS_OK) {
    if (e == nullptr) return false;  // the end of the current values: nothing new
    kvEntry_Destroy(e);
    return true;
  }
  kvWatcher_Destroy(lease_watch_);  // broken (NATS went away): made again next call
  lease_watch_ = nullptr;
  return true;
}

Result<std::optional<GroupSwitchover>> GroupStore::ReadSwitchover(const std::string& group) {
  auto raw = Get(SwitchoverKey(group));
  if (!raw.ok()) return raw.status();
  if (!raw->has_value()) return std::optional<GroupSwitchover>();
  auto r = ParseGroupSwitchover((*raw)->value);
  if (!r.ok()) return r.status();
  return std::optional(std::move(*r));
}

Status GroupStore::PutSwitchover(const std::string& group, const GroupSwitchover& request) {
  const std::string text = FormatGroupSwitchover(request);
  uint64_t rev = 0;
  natsStatus s = kvStore_Put(&rev, kv_, SwitchoverKey(group).c_str(), text.data(),
                             static_cast<int>(text.size()));
  return s == NATS_OK ? Status::OK() : NatsError("requesting a switchover", s);
}

Status GroupStore::DeleteSwitchover(const std::string& group) {
  natsStatus s = kvStore_Delete(kv_, SwitchoverKey(group).c_str());
  return s == NATS_OK ? Status::OK() : NatsError("clearing the switchover request", s);
}

}  // namespace relgraph::net
