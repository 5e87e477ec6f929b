#include "net/cluster/cluster_client.h"

#include <algorithm>
#include <thread>

namespace relgraph::net {

Result<std::unique_ptr<ClusterClient>> ClusterClient::Connect(const ClusterClientOptions& options) {
  std::unique_ptr<ClusterClient> c(new ClusterClient(options));
  auto link = NatsLink::Connect(options.nats_url, options.names);
  if (!link.ok()) return link.status();
  c->link_ = std::move(*link);
  RELGRAPH_RETURN_IF_ERROR(c->RefreshMap());
  return c;
}

bool ClusterClient::WaitWhileMoving(std::optional<std::chrono::steady_clock::time_point>* since) {
  const auto now = std::chrono::steady_clock::now();
  if (!since->has_value()) *since = now;
  if (now - **since >= options_.moving_wait) return false;
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return true;
}

Status ClusterClient::RefreshMap() {
  auto m = link_->ReadMap();
  if (!m.ok()) return m.status();
  // A shard whose address changed is connected to again.
  for (auto it = clients_.begin(); it != clients_.end();) {
    const ShardInfo* now = m->Find(it->first);
    const ShardInfo* before = map_.Find(it->first);
    if (now == nullptr || before == nullptr || now->Addresses() != before->Addresses()) {
      it = clients_.erase(it);
    } else {
      ++it;
    }
  }
  map_ = std::move(*m);
  return Status::OK();
}

Result<Client*> ClusterClient::ShardClient(uint32_t id) {
  if (auto it = clients_.find(id); it != clients_.end()) {
    if (it->second->healthy()) return it->second.get();
    // Broken (the shard restarted, or the network failed): every call on it would fail at
    // once, so dial again.
    clients_.erase(it);
  }
  const ShardInfo* info = map_.Find(id);
  if (info == nullptr) {
    return Status::NotFound("shard " + std::to_string(id) + " is not in the shard map (version " +
                            std::to_string(map_.version) + ")");
  }
  if (!info->group.empty()) return GroupPrimary(*info);
  ClientOptions o = options_.client;
  RELGRAPH_RETURN_IF_ERROR(ParseHostPort(info->address, &o.host, &o.port));
  auto client = Client::Connect(o);
  if (!client.ok()) {
    return Status(client.status().code(), "shard " + std::to_string(id) + " at " + info->address +
                                              ": " + client.status().message());
  }
  Client* raw = client->get();
  clients_[id] = std::move(*client);
  return raw;
}

Result<Client*> ClusterClient::GroupPrimary(const ShardInfo& shard) {
  // The member found or named last, then every member in turn.
  std::vector<std::string> tries;
  if (auto it = primary_at_.find(shard.id); it != primary_at_.end()) tries.push_back(it->second);
  for (const std::string& m : shard.members) {
    if (tries.empty() || m != tries.front()) tries.push_back(m);
  }
  std::string why;
  for (const std::string& address : tries) {
    ClientOptions o = options_.client;
    if (!ParseHostPort(address, &o.host, &o.port).ok()) continue;
    auto client = Client::Connect(o);
    if (!client.ok()) {
      why += (why.empty() ? "" : "; ") + address + ": " + client.status().message();
      continue;
    }
    auto info = (*client)->Info();
    if (!info.ok()) {
      why += (why.empty() ? "" : "; ") + address + ": " + info.status().message();
      continue;
    }
    const auto role = std::find_if(info->fields.begin(), info->fields.end(),
                                   [](const InfoField& f) { return f.name == "role"; });
    if (role == info->fields.end() || role->value != 0) {
      why += (why.empty() ? "" : "; ") + address + " is a replica";
      continue;
    }
    primary_at_[shard.id] = address;
    Client* raw = client->get();
    clients_[shard.id] = std::move(*client);
    return raw;
  }
  primary_at_.erase(shard.id);
  return Status(Code::kUnavailable, "shard " + std::to_string(shard.id) + " (group " + shard.group +
                                        "): no member answers as its primary (" + why + ")");
}

bool ClusterClient::Grouped(uint32_t id) const {
  const ShardInfo* info = map_.Find(id);
  return info != nullptr && !info->group.empty();
}

void ClusterClient::LosePrimary(uint32_t id, const std::string& named) {
  clients_.erase(id);
  std::string host;
  uint16_t port = 0;
  if (!named.empty() && ParseHostPort(named, &host, &port).ok()) {
    primary_at_[id] = named;
  } else {
    primary_at_.erase(id);
  }
}

bool ClusterClient::WaitForPrimary(std::optional<std::chrono::steady_clock::time_point>* since) {
  const auto now = std::chrono::steady_clock::now();
  if (!since->has_value()) *since = now;
  const auto waited = now - **since;
  if (waited >= options_.failover_timeout) return false;
  const auto step = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(waited) / 4,
                               std::chrono::milliseconds(5), std::chrono::milliseconds(100));
  std::this_thread::sleep_for(step);
  return true;
}

Status ClusterClient::OutcomeUnknown(const Status& last, uint32_t id) const {
  return Status(Code::kUnavailable,
                "shard " + std::to_string(id) +
                    " lost its primary after the command was sent: " + "its outcome is unknown (" +
                    last.ToString() + "); it is not sent again: it is not retry-safe");
}

template <typename Request>
Result<typename Request::Reply> ClusterClient::Page(const PageQuery& query) {
  Request request;
  static_cast<PageQuery&>(request) = query;
  auto ask = [&](Client& c) { return c.Call(request); };
  const uint64_t viewer = query.viewer.value_or(0);
  // With the viewer on the user's shard (by the map held), that shard answers the page whole;
  // unless a `moved` answer brings a map that parts them: then, as with a viewer elsewhere,
  // the page is fetched without the viewer and its relations come from the viewer's shard.
  if (viewer == 0 || map_.OwnerOf(viewer) == map_.OwnerOf(query.user)) {
    bool parted = false;
    auto page = Routed<typename Request::Reply>(query.user, Request::kOpcode, ask, viewer, &parted);
    if (!parted) return page;
  }
  request.viewer.reset();
  auto page = Routed<typename Request::Reply>(query.user, Request::kOpcode, ask);
  if (!page.ok() || page->entries.empty()) return page;
  std::vector<uint64_t> users;
  users.reserve(page->entries.size());
  for (const PageEntry& e : page->entries) users.push_back(e.user);
  auto relations = Relations(*query.viewer, users);
  if (!relations.ok()) return relations.status();
  for (size_t i = 0; i < page->entries.size(); ++i) {
    page->entries[i].viewer_relation = (*relations)[i];
  }
  return page;
}

Result<PageReply> ClusterClient::Following(const PageQuery& query) {
  return Page<FollowingRequest>(query);
}
Result<PageReply> ClusterClient::Fans(const PageQuery& query) {
  return Page<FansRequest>(query);
}
Result<PageReply> ClusterClient::Friends(const PageQuery& query) {
  return Page<FriendsRequest>(query);
}
Result<CountedPageReply> ClusterClient::Blocks(const PageQuery& query) {
  return Page<BlocksRequest>(query);
}
Result<CountedPageReply> ClusterClient::Requests(const PageQuery& query) {
  return Page<RequestsRequest>(query);
}

Result<KnownFollowersReply> ClusterClient::KnownFollowers(uint64_t viewer, uint64_t target,
                                                          uint16_t limit) {
  if (viewer == 0 || target == 0) {
    return Status(Code::kInvalidUserId, "known_followers: user id 0 (viewer or target)");
  }
  if (limit > kMaxPageLimit) {
    return Status::InvalidArgument("known_followers: limit " + std::to_string(limit) + " is over " +
                                   std::to_string(kMaxPageLimit));
  }
  // Both on one shard (by the map held): it answers, unless a `moved` answer brings a map
  // that parts them (then as below).
  if (map_.OwnerOf(viewer) == map_.OwnerOf(target)) {
    bool parted = false;
    const KnownFollowersRequest request{viewer, target, limit};
    auto known = Routed<KnownFollowersReply>(
        viewer, Opcode::kKnownFollowers, [&](Client& c) { return c.Call(request); }, target,
        &parted);
    if (!parted) return known;
  }
  // Every followee of the viewer, newest first, page by page.
  std::vector<uint64_t> followees;
  PageQuery q;
  q.user = viewer;
  q.limit = kMaxPageLimit;
  for (;;) {
    auto page = Following(q);
    if (!page.ok()) return page.status();
    for (const PageEntry& e : page->entries) followees.push_back(e.user);
    if (!page->next) break;
    q.after = page->next;
  }
  KnownFollowersReply out;
  // In RELATIONS batches of the server's size.
  for (size_t at = 0; at < followees.size(); at += kMaxRelationsIds) {
    const std::span<const uint64_t> part(followees.data() + at,
                                         std::min<size_t>(kMaxRelationsIds, followees.size() - at));
    auto relations = Relations(target, part);  // bit "followed by": the followee follows target
    if (!relations.ok()) return relations.status();
    for (size_t i = 0; i < part.size(); ++i) {
      if ((static_cast<uint8_t>((*relations)[i]) &
           static_cast<uint8_t>(RelationCode::kFollowedBy)) == 0)
        continue;
      ++out.total;
      if (out.users.size() < limit) out.users.push_back(part[i]);
    }
  }
  return out;
}

Result<std::map<uint32_t, std::map<std::string, uint64_t>>> ClusterClient::ShardInfos() {
  std::map<uint32_t, std::map<std::string, uint64_t>> out;
  for (const ShardInfo& s : map_.shards) {
    auto client = ShardClient(s.id);
    if (!client.ok()) return client.status();
    auto info = (*client)->Info();
    if (!info.ok()) {
      if (!(*client)->healthy()) clients_.erase(s.id);
      return Status(info.status().code(),
                    "INFO of shard " + std::to_string(s.id) + ": " + info.status().message());
    }
    for (const InfoField& f : info->fields) out[s.id][f.name] = f.value;
    if (Grouped(s.id) && out[s.id]["role"] != 0) {  // its primary stepped down since
      LosePrimary(s.id, "");
      return Status(Code::kUnavailable, "shard " + std::to_string(s.id) +
                                            ": the member asked is no longer its primary");
    }
  }
  return out;
}

Status ClusterClient::Barrier(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // Quiet: every outbox has sent all its shard logged, every inbox has applied and fsynced
  // all it was sent. Two quiet passes in a row with no shard logging anything in between
  // mean no message was in flight at the second: applying one logs a record, and a record
  // logged is sent before its shard reads quiet. (Applying a removal makes a shard decide
  // unfollows; they go out and come in before the passes can agree.)
  std::map<uint32_t, uint64_t> previous;  // last_lsn per shard at the last quiet pass
  for (;;) {
    auto infos = ShardInfos();
    if (!infos.ok()) {
      // A shard restarting, or a connection it dropped (ShardInfos reconnects next time):
      // wait for it like for any shard not yet quiet.
      if (std::chrono::steady_clock::now() > deadline) {
        return Status(Code::kTimeout, "barrier: " + infos.status().ToString());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      previous.clear();
      continue;
    }
    bool quiet = true;
    std::map<uint32_t, uint64_t> last;
    for (auto& [id, f] : *infos) {
      quiet &= f["cluster_inbound_pending"] == 0 && f["cluster_forwarded_lsn"] >= f["last_lsn"];
      last[id] = f["last_lsn"];
    }
    if (quiet && last == previous) return Status::OK();
    previous = quiet ? last : std::map<uint32_t, uint64_t>{};
    if (std::chrono::steady_clock::now() > deadline) {
      return Status(Code::kTimeout, "barrier: the shards did not settle (changes still flowing)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(quiet ? 1 : 5));
  }
}

}  // namespace relgraph::net
