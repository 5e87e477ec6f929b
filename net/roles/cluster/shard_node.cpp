#include "net/roles/cluster/shard_node.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <vector>

#include "engine/durable/wal_records.h"
#include "net/protocol/command_table.h"
#include "net/protocol/protocol.h"
#include "net/roles/cluster/change_message.h"
#include "net/roles/cluster/map_file.h"
#include "net/roles/cluster/move_message.h"

namespace relgraph {
namespace {

// Whether a cluster runs `op`: its row in the command table says so. The rest are about no
// user (INFO, SNAPSHOT, ...; answered by the shard asked, never routed here) or not
// cluster-aware yet: those are refused rather than answered from this shard's part of the data.
bool ClusterServes(net::Opcode op) {
  const net::CommandInfo* row = net::FindCommand(static_cast<uint8_t>(op));
  return row != nullptr && row->cluster;
}

int64_t MsBetween(std::chrono::steady_clock::time_point a,
                  std::chrono::steady_clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

ShardNode::ShardNode(Db* db, ShardNodeOptions options) : db_(db), options_(std::move(options)) {}

ShardNode::~ShardNode() {
  Stop();
}

void ShardNode::Log(const std::string& line) const {
  if (options_.log) {
    options_.log(line);
  } else {
    std::fprintf(stderr, "relgraph shard %u: %s\n", options_.shard_id, line.c_str());
  }
}

bool ShardNode::Backoff() {
  for (auto until = std::chrono::steady_clock::now() + options_.retry;
       !stop_.load() && std::chrono::steady_clock::now() < until;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return !stop_.load();
}

std::shared_ptr<const net::ShardMap> ShardNode::map() const {
  std::lock_guard lock(map_mu_);
  return map_;
}

void ShardNode::SetMap(net::ShardMap map, bool from_nats, bool force) {
  if (map.Find(options_.shard_id) == nullptr) {
    const auto held = this->map();
    Log("shard map version " + std::to_string(map.version) + " has no shard " +
        std::to_string(options_.shard_id) + ": kept version " +
        (held != nullptr ? std::to_string(held->version) : std::string("none")));
    return;
  }
  const uint64_t version = map.version;
  {
    std::lock_guard lock(map_mu_);
    if (map_ != nullptr && map_->version >= version && !force) return;
    map_ = std::make_shared<const net::ShardMap>(std::move(map));
    // Before anything is routed here by a map that moves buckets to this shard.
    inbox_hold_ = MustHoldInbox(*map_);
  }
  map_changed_.notify_all();
  {
    std::lock_guard lock(stats_mu_);
    stats_.map_version = version;
  }
  if (from_nats && !options_.data_dir.empty()) {
    // The newest map held, whichever thread took it: a later start without NATS serves by it.
    std::lock_guard lock(save_mu_);
    const auto held = this->map();
    Env* env = options_.env != nullptr ? options_.env : Env::Posix();
    if (Status s = SaveShardMapFile(env, options_.data_dir, *held); !s.ok()) {
      Log("saving shard map version " + std::to_string(held->version) + ": " + s.ToString());
    }
  }
}

UserPlace ShardNode::PlaceOf(const net::ShardMap& m, uint64_t user) const {
  if (m.move && m.move->from == options_.shard_id && m.Moving(user)) {
    return m.move->phase == net::MovePhase::kCopy ? UserPlace::kHandedOver : UserPlace::kLeaving;
  }
  return m.OwnerOf(user) == options_.shard_id ? UserPlace::kHere : UserPlace::kElsewhere;
}

bool ShardNode::MustHoldInbox(const net::ShardMap& m) const {
  return m.move && m.move->to == options_.shard_id && imported_move_.load() != m.move->id;
}

Status ShardNode::Start() {
  if (options_.shard_id == 0) return Status::InvalidArgument("a shard needs a shard id (1..65535)");
  stop_ = false;
  // Until a map names this shard's buckets, the Db asks about none (Admit refuses them all).
  db_->SetPlacement([this](UserId u) {
    const auto m = this->map();
    return m != nullptr ? PlaceOf(*m, u) : UserPlace::kHere;
  });
  const Status joined = Join();
  if (joined.ok() || joined.code() != Code::kUnavailable) {
    if (!joined.ok()) db_->SetPlacement(nullptr);
    return joined;
  }
  // NATS does not answer: serve by the map last seen, and join when NATS is back.
  const std::string saved_in =
      options_.data_dir.empty() ? std::string("no data directory")
                                : JoinPath(options_.data_dir, kShardMapFileName);
  Result<net::ShardMap> saved = Status::NotFound(saved_in);
  if (!options_.data_dir.empty()) {
    saved = LoadShardMapFile(options_.env != nullptr ? options_.env : Env::Posix(),
                             options_.data_dir);
  }
  if (saved.ok() && saved->Find(options_.shard_id) != nullptr) {
    const uint64_t version = saved->version;
    SetMap(std::move(*saved), /*from_nats=*/false);
    Log("cannot join the cluster yet (" + joined.ToString() +
        "): serving this shard's users by shard map version " + std::to_string(version) +
        " saved in " + saved_in +
        "; changes for other shards wait in the WAL; trying to join again with backoff");
  } else {
    const std::string why =
        saved.ok() ? "the map saved in " + saved_in + " has no shard " +
                         std::to_string(options_.shard_id)
        : saved.status().code() == Code::kNotFound
            ? "this shard has never seen the shard map (no " + saved_in + ")"
            : "the saved shard map does not read (" + saved.status().ToString() + ")";
    Log("cannot join the cluster yet (" + joined.ToString() + ") and " + why +
        ": refusing every command until it joins, as it cannot tell which users are its own; "
        "trying to join again with backoff");
  }
  join_thread_ = std::thread([this] { JoinLoop(); });
  return Status::OK();
}

Status ShardNode::Join() {
  auto link = net::NatsLink::Connect(options_.nats_url, options_.names);
  if (!link.ok()) return link.status();
  auto map = (*link)->ReadMap();
  if (!map.ok()) return map.status();
  if (map->Find(options_.shard_id) == nullptr) {
    return Status::InvalidArgument("the shard map (version " + std::to_string(map->version) +
                                   ") has no shard " + std::to_string(options_.shard_id));
  }
  if (map->move && map->move->to == options_.shard_id) {
    // Brought in before a restart: the inbox need not wait again.
    auto done = (*link)->MoveDone(map->move->id);
    if (!done.ok()) return done.status();
    if (*done) imported_move_ = map->move->id;
  }
  RELGRAPH_RETURN_IF_ERROR((*link)->EnsureStream());
  RELGRAPH_RETURN_IF_ERROR((*link)->EnsureMoveStream());
  link_ = std::move(*link);
  // NATS holds the truth, even when its revisions restarted below the map saved here.
  SetMap(std::move(*map), /*from_nats=*/true, /*force=*/true);
  map_thread_ = std::thread([this] { MapLoop(); });
  outbox_thread_ = std::thread([this] { OutboxLoop(); });
  inbox_thread_ = std::thread([this] { InboxLoop(); });
  move_thread_ = std::thread([this] { MoveLoop(); });
  joined_ = true;
  return Status::OK();
}

void ShardNode::JoinLoop() {
  std::chrono::milliseconds wait = options_.retry;
  std::string last;
  while (!stop_.load()) {
    for (auto until = std::chrono::steady_clock::now() + wait;
         !stop_.load() && std::chrono::steady_clock::now() < until;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (stop_.load()) return;
    const Status s = Join();
    if (s.ok()) {
      const auto m = map();
      Log("joined the cluster at " + options_.nats_url + " (shard map version " +
          std::to_string(m->version) + ")");
      return;
    }
    if (s.ToString() != last) {  // once per new reason, not once per try
      Log("joining the cluster at " + options_.nats_url + ": " + s.ToString() +
          "; trying again with backoff");
      last = s.ToString();
    }
    wait = std::min(wait * 2, options_.join_retry_max);
  }
}

void ShardNode::Stop() {
  {
    std::lock_guard lock(map_mu_);
    stop_ = true;
  }
  map_changed_.notify_all();
  // The join thread first: once it is done, no other thread starts.
  if (join_thread_.joinable()) join_thread_.join();
  for (std::thread* t : {&map_thread_, &outbox_thread_, &inbox_thread_, &move_thread_}) {
    if (t->joinable()) t->join();
  }
  db_->SetPlacement(nullptr);
}

Status ShardNode::Admit(net::Opcode opcode, uint64_t user, uint64_t viewer) const {
  if (!ClusterServes(opcode)) {
    return Status(Code::kUnsupported, std::string(net::OpcodeName(opcode)) +
                                          " is not run by a cluster yet (docs/cluster.md lists "
                                          "the commands it runs)");
  }
  const std::shared_ptr<const net::ShardMap> m = map();
  if (m == nullptr) {
    return Status(Code::kUnavailable,
                  "shard " + std::to_string(options_.shard_id) +
                      " has not joined the cluster and has never seen its shard map, so it "
                      "cannot tell which users are its own; retry once NATS answers");
  }
  for (uint64_t u : {user, viewer}) {
    if (u == 0) continue;
    const uint32_t bucket = net::BucketOf(u, m->buckets);
    const uint32_t owner = m->owner[bucket];
    if (owner == options_.shard_id) {
      if (m->move && m->move->to == owner && m->move->Covers(bucket) &&
          imported_move_.load() != m->move->id) {
        return Status(Code::kMoving,
                      "user " + std::to_string(u) + " is in bucket " + std::to_string(bucket) +
                          ", which shard " + std::to_string(owner) + " is taking over from shard " +
                          std::to_string(m->move->from) + "; retry shortly",
                      m->move->from);
      }
      continue;
    }
    const net::ShardInfo* info = m->Find(owner);
    return Status(Code::kMoved,
                  "user " + std::to_string(u) + " is in bucket " + std::to_string(bucket) +
                      ", served by shard " + std::to_string(owner) + " at " +
                      (info != nullptr ? info->address : std::string("?")) +
                      " (shard map version " + std::to_string(m->version) + ")",
                  owner);
  }
  return Status::OK();
}

ShardNode::Stats ShardNode::stats() const {
  std::lock_guard lock(stats_mu_);
  return stats_;
}

Result<uint64_t> ShardNode::InboundPending() const {
  if (!inbox_subscribed_.load()) {
    return Status(Code::kUnavailable, "the inbox is not subscribed (starting, or retrying)");
  }
  auto state = link_->ConsumerStateOf(options_.shard_id);
  if (!state.ok()) return state.status();
  return state->pending + state->ack_pending;
}

void ShardNode::AddInfo(std::vector<net::InfoField>* fields) const {
  const Stats s = stats();
  auto add = [fields](const char* name, uint64_t value) { fields->push_back({name, value}); };
  add("cluster_shard_id", options_.shard_id);
  add("cluster_joined", joined_.load() ? 1 : 0);
  add("cluster_map_version", s.map_version);
  add("cluster_forwarded_lsn", s.forwarded_lsn);
  add("cluster_messages_sent", s.messages_sent);
  add("cluster_records_sent", s.records_sent);
  add("cluster_messages_applied", s.messages_applied);
  add("cluster_records_applied", s.records_applied);
  add("cluster_records_skipped", s.records_skipped);
  add("cluster_messages_rejected", s.messages_rejected);
  add("cluster_post_conflicts", s.post_conflicts);
  auto pending = InboundPending();
  // All ones: JetStream did not answer, so the pending count is unknown.
  add("cluster_inbound_pending", pending.ok() ? *pending : UINT64_MAX);
  add("cluster_inbound_delay_ms", s.inbound_delay_ms);
  add("cluster_outbox_map_version", s.outbox_map_version);
  add("cluster_inbox_held", inbox_held_.load() ? 1 : 0);
  add("cluster_moves_exported", s.moves_exported);
  add("cluster_moves_imported", s.moves_imported);
  add("cluster_foreign_dropped", s.foreign_dropped);
}

void ShardNode::MapLoop() {
  while (!stop_.load()) {
    Status s = link_->WatchMap(stop_, [this](net::ShardMap m) { SetMap(std::move(m)); });
    if (stop_.load()) break;
    Log("watching the shard map: " + s.ToString() + "; again shortly");
    if (!Backoff()) break;
  }
}

void ShardNode::OutboxLoop() {
  const uint32_t self = options_.shard_id;
  std::unique_ptr<ChangeReader> reader;
  uint64_t acked = 0;  // the cursor's position
  auto last_ack = std::chrono::steady_clock::now();
  auto ack = [&](bool force) {
    const uint64_t forwarded = stats().forwarded_lsn;
    // The ACK is itself a record the outbox reads next: acking only when more than it
    // passed keeps an idle shard from acking its own acks forever.
    if (forwarded <= acked + 1) return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_ack < std::chrono::milliseconds(100)) return;
    if (Status s = db_->AckCursor(options_.outbox_cursor, forwarded); s.ok()) {
      acked = forwarded;
    } else {
      Log("outbox: moving cursor " + options_.outbox_cursor + ": " + s.ToString());
    }
    last_ack = now;
  };
  struct Outgoing {
    std::string bytes;
    uint32_t count = 0;
    uint64_t first = 0, last = 0;
  };
  while (!stop_.load()) {
    if (reader == nullptr) {
      auto resume = db_->CursorResumeLsn(options_.outbox_cursor);
      uint64_t from = 0;
      if (resume.ok()) {
        from = *resume;
        acked = from - 1;
      } else if (resume.status().code() == Code::kNotFound) {
        from = std::max<uint64_t>(1, db_->OldestWalLsn());  // a new shard: from its start
      } else {
        // The cursor's WAL is gone (retention limits): changes in between never reach the
        // other shards. This needs an operator; say so loudly and go on from what is kept.
        Log("outbox: " + resume.status().ToString() +
            ": changes before the oldest kept LSN are not sent");
        from = std::max<uint64_t>(1, db_->OldestWalLsn());
      }
      auto opened = db_->OpenChanges(from);
      if (!opened.ok()) {
        Log("outbox: reading the WAL from " + std::to_string(from) + ": " +
            opened.status().ToString());
        if (!Backoff()) break;
        continue;
      }
      reader = std::move(*opened);
    }
    // Every batch before this one is in JetStream: from here on, records go by this map.
    const std::shared_ptr<const net::ShardMap> m = map();
    {
      std::lock_guard lock(stats_mu_);
      stats_.outbox_map_version = m->version;
    }
    std::map<uint32_t, Outgoing> out;
    uint64_t read_to = 0;
    auto add = [&](uint32_t target, uint64_t lsn, uint8_t type, std::string_view payload) {
      Outgoing& o = out[target];
      if (o.count == 0) {
        StartChangeMessage(self, &o.bytes);
        o.first = lsn;
      }
      AppendChangeRecord(lsn, type, payload, &o.bytes);
      ++o.count;
      o.last = lsn;
    };
    auto n = reader->ReadRecords(options_.batch_records, [&](const WalRecordView& r) -> Status {
      read_to = r.lsn;
      if (r.type == static_cast<uint8_t>(WalRecordType::kRemote)) {
        return BackFill(*m, r, [&](uint32_t target, std::string_view posts) {
          add(target, r.lsn, static_cast<uint8_t>(WalRecordType::kPosts), posts);
        });
      }
      if (r.type < 1 || r.type > kMaxWalRecordType ||
          !IsRemoteApplicable(static_cast<WalRecordType>(r.type))) {
        return Status::OK();  // cursors, mutes, epochs, access records: nothing to send
      }
      auto op = DecodeWalRecord(r.type, r.payload);
      if (!op.ok()) return op.status();
      for (uint32_t target : TargetsOf(*m, *op)) add(target, r.lsn, r.type, r.payload);
      return Status::OK();
    });
    if (!n.ok()) {
      Log("outbox: reading the WAL: " + n.status().ToString());
      reader.reset();
      if (!Backoff()) break;
      continue;
    }
    if (*n == 0) {
      ack(false);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    // Every message of the batch in JetStream before the position moves past it; a failed
    // publish is retried (JetStream drops a repeated message id; the receiver skips by LSN).
    bool sent = out.empty();
    while (!sent && !stop_.load()) {
      Status failure;
      for (auto& [target, o] : out) {
        if (o.count == 0) continue;  // this one made it on an earlier try
        FinishChangeMessage(o.count, &o.bytes);
        const std::string subject = link_->SubjectOf(target);
        // JetStream drops a repeated id across the whole stream, not per subject: the id
        // names the target too, or records sent to two shards would reach only one.
        const std::string id = std::to_string(self) + ">" + std::to_string(target) + ":" +
                               std::to_string(o.first) + "-" + std::to_string(o.last);
        failure =
            link_->Publish(subject, o.bytes, id,
                           "publishing LSNs " + std::to_string(o.first) + ".." +
                               std::to_string(o.last) + " to shard " + std::to_string(target));
        if (!failure.ok()) break;
        std::lock_guard lock(stats_mu_);
        ++stats_.messages_sent;
        stats_.records_sent += o.count;
        o.count = 0;
      }
      if (failure.ok()) {
        sent = true;
      } else {
        Log("outbox: " + failure.ToString() + "; retrying");
        if (!Backoff()) break;
      }
    }
    if (!sent) break;
    {
      std::lock_guard lock(stats_mu_);
      stats_.forwarded_lsn = read_to;
    }
    ack(false);
  }
  ack(true);
}

std::vector<uint32_t> ShardNode::TargetsOf(const net::ShardMap& m, const WalOp& op) const {
  const uint32_t self = options_.shard_id;
  std::vector<uint32_t> targets;
  auto all_others = [&] {
    for (const net::ShardInfo& s : m.shards) {
      if (s.id != self) targets.push_back(s.id);
    }
  };
  auto owner_of = [&](UserId u) {
    if (const uint32_t t = m.OwnerOf(u);
        t != self && std::find(targets.begin(), targets.end(), t) == targets.end()) {
      targets.push_back(t);
    }
  };
  const RemoteRecipients to = RecipientsOf(op);
  switch (to.kind) {
    case RemoteRecipients::kEveryShard:
      all_others();
      break;
    case RemoteRecipients::kFansOf: {
      // The shards that hold fans of the author; every shard for an author with more fans
      // than is worth listing (a celebrity: its posts go to every shard's copies).
      const Db::FanSample fans = db_->FansUpTo(to.users[0], options_.broadcast_fans);
      if (fans.fan_count > options_.broadcast_fans) {
        all_others();
        break;
      }
      for (UserId f : fans.fans) owner_of(f);
      break;
    }
    case RemoteRecipients::kUsers:
      for (uint8_t i = 0; i < to.count; ++i) owner_of(to.users[i]);
      break;
  }
  return targets;
}

Status ShardNode::BackFill(const net::ShardMap& m, const WalRecordView& r,
                           const std::function<void(uint32_t, std::string_view)>& send) const {
  auto op = DecodeWalRecord(r.type, r.payload);
  if (!op.ok()) return op.status();
  // A follow another shard decided that made it hold a first fan of our user, or its
  // posts-wanted record (a first fan made by an approval): that shard cleared its copies of
  // the user's posts, and gets them back whole, as they are now (later changes follow this
  // message in order, each applied by its ensure form).
  const bool first_follow =
      op->type == WalRecordType::kFollow && (op->flags & kFollowFirstRemoteFan) != 0;
  if (!(first_follow || op->type == WalRecordType::kPostsWanted) ||
      op->origin == options_.shard_id) {
    return Status::OK();
  }
  const UserId author = op->cleared_author();
  // A user moving away is this shard's to answer for until its state is handed over: what
  // asks for it was routed here by the map before the flip (ExportMove waits for it).
  const bool leaving = m.move && m.move->from == options_.shard_id && m.Moving(author);
  if (m.OwnerOf(author) != options_.shard_id && !leaving) return Status::OK();
  std::vector<FeedEntry> posts = db_->RetainedPosts(author);
  if (posts.size() > kMaxPostsPerRecord) {
    posts.erase(posts.begin(), posts.end() - kMaxPostsPerRecord);  // relgraphd refuses such K
  }
  send(op->origin, EncodePostsRecord(author, posts));
  return Status::OK();
}

Result<natsSubscription*> ShardNode::SubscribeInbox() {
  const std::string& stream = options_.names.stream;
  const std::string subject = link_->SubjectOf(options_.shard_id);
  const std::string durable = link_->ConsumerOf(options_.shard_id);
  jsErrCode jerr = static_cast<jsErrCode>(0);
  // Acknowledged messages are a prefix of what was delivered (acknowledged in order, each
  // only once durable here), so everything up to the ack floor is applied.
  uint64_t ack_floor = 0;
  jsConsumerInfo* ci = nullptr;
  natsStatus s =
      js_GetConsumerInfo(&ci, link_->js(), stream.c_str(), durable.c_str(), nullptr, &jerr);
  if (s == NATS_OK) {
    ack_floor = ci->AckFloor.Stream;
    jsConsumerInfo_Destroy(ci);
    s = js_DeleteConsumer(link_->js(), stream.c_str(), durable.c_str(), nullptr, &jerr);
    if (s != NATS_OK && s != NATS_NOT_FOUND) {
      return net::NatsError("restarting consumer " + durable, s, jerr);
    }
  } else if (s != NATS_NOT_FOUND) {
    return net::NatsError("consumer info of " + durable, s, jerr);
  }
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = stream.c_str();
  so.Config.AckPolicy = js_AckExplicit;
  so.Config.DeliverPolicy = js_DeliverByStartSequence;
  so.Config.OptStartSeq = ack_floor + 1;
  so.Config.MaxAckPending = 1 << 16;
  // A message unacknowledged this long is delivered again to this subscription: one whose
  // acknowledgement was lost. Applied then, it is skipped by its LSN.
  so.Config.AckWait = int64_t{5} * 1'000'000'000;
  natsSubscription* sub = nullptr;
  jerr = static_cast<jsErrCode>(0);
  s = js_PullSubscribe(&sub, link_->js(), subject.c_str(), durable.c_str(), nullptr, &so, &jerr);
  if (s != NATS_OK) return net::NatsError("subscribing to " + subject, s, jerr);
  inbox_subscribed_ = true;
  return sub;
}

// Why the consumer restarts at its ack floor on every subscription: an inbound position
// skips records at or below it, which is right only if each origin's records arrive in
// order. JetStream redelivers an unacknowledged message only after its ack wait, and
// meanwhile hands out newer ones; a message delivered to a process that then died, or left
// unacknowledged when the WAL failed, would come back after newer records of its origin had
// raised the position past it, and be skipped unapplied. Restarting at the ack floor makes
// it come first. So the inbox stops pulling from a subscription whenever it leaves a message
// unacknowledged, and subscribes anew.
void ShardNode::InboxLoop() {
  natsSubscription* sub = nullptr;
  auto drop_subscription = [&] {
    inbox_subscribed_ = false;
    natsSubscription_Destroy(sub);
    sub = nullptr;
  };
  while (!stop_.load()) {
    if (inbox_hold_.load()) {  // a bucket move: nothing more until its state is here
      inbox_held_ = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    inbox_held_ = false;
    if (sub == nullptr) {
      auto subscribed = SubscribeInbox();
      if (!subscribed.ok()) {
        Log("inbox: " + subscribed.status().ToString());
        if (!Backoff()) break;
        continue;
      }
      sub = *subscribed;
    }
    natsMsgList list{};
    jsErrCode jerr = static_cast<jsErrCode>(0);
    natsStatus s = natsSubscription_Fetch(&list, sub, 64, 200, &jerr);
    if (s == NATS_TIMEOUT) continue;
    if (s != NATS_OK) {
      Log("inbox: " +
          net::NatsError("fetching from " + link_->SubjectOf(options_.shard_id), s, jerr)
              .ToString());
      natsMsgList_Destroy(&list);
      drop_subscription();
      if (!Backoff()) break;
      continue;
    }
    std::vector<natsMsg*> handled;
    uint64_t commit = 0;
    int64_t last_publish_ns = 0;
    bool wal_failed = false;
    for (int i = 0; i < list.Count && !wal_failed; ++i) {
      natsMsg* msg = list.Msgs[i];
      auto message = DecodeChangeMessage(
          std::string_view(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg))));
      Result<Db::RemoteApplied> applied = message.ok() ? Status::OK() : message.status();
      uint64_t c = 0;
      if (message.ok()) applied = db_->ApplyRemote(message->origin, message->records, &c);
      if (!applied.ok() && applied.status().code() == Code::kUnavailable) {
        // The WAL failed: leave it unacknowledged, to be redelivered once it works again.
        Log("inbox: " + applied.status().ToString());
        wal_failed = true;
        break;
      }
      if (!applied.ok()) {
        // No shard sends this: keep it from coming back, and say so.
        Log("inbox: message dropped: " + applied.status().ToString());
        natsMsg_Term(msg, nullptr);
        std::lock_guard lock(stats_mu_);
        ++stats_.messages_rejected;
        continue;
      }
      commit = std::max(commit, c);
      handled.push_back(msg);
      jsMsgMetaData* meta = nullptr;
      if (natsMsg_GetMetaData(&meta, msg) == NATS_OK) {
        last_publish_ns = meta->Timestamp;
        jsMsgMetaData_Destroy(meta);
      }
      std::lock_guard lock(stats_mu_);
      ++stats_.messages_applied;
      stats_.records_applied += applied->applied;
      stats_.records_skipped += applied->skipped;
      stats_.post_conflicts += applied->post_conflicts;
    }
    // Durable here before JetStream may forget them.
    if (Status d = db_->SyncThrough(commit); !d.ok()) {
      Log("inbox: " + d.ToString());
      handled.clear();
      wal_failed = true;
    }
    for (natsMsg* msg : handled) natsMsg_Ack(msg, nullptr);
    if (last_publish_ns > 0 && !handled.empty()) {
      std::lock_guard lock(stats_mu_);
      stats_.inbound_delay_ms =
          static_cast<uint64_t>(std::max<int64_t>(0, NowNs() - last_publish_ns) / 1'000'000);
    }
    natsMsgList_Destroy(&list);
    if (wal_failed) {
      drop_subscription();  // what was left unacknowledged comes first on the next one
      if (!Backoff()) break;
    }
  }
  if (sub != nullptr) drop_subscription();
}

// The move thread wakes on each new map (and every 200 ms) and does what the map's move asks
// of this shard; a step that fails (NATS down) is tried again on the next wake.
void ShardNode::MoveLoop() {
  const uint32_t self = options_.shard_id;
  uint64_t exported = 0;  // the move whose state this process published
  // Whether users of other shards may have state here that none of ours needs: after a
  // move away from here, and at start (a move may have ended while this shard was down).
  bool drop = true;
  uint32_t dropped_to = 0;  // the shard they went to, when known
  uint64_t seen = 0;
  while (!stop_.load()) {
    std::shared_ptr<const net::ShardMap> m;
    {
      std::unique_lock lock(map_mu_);
      map_changed_.wait_for(lock, std::chrono::milliseconds(200),
                            [&] { return stop_.load() || map_->version != seen; });
      if (stop_.load()) break;
      m = map_;
    }
    seen = m->version;
    Status step;
    if (m->move && m->move->to == self && m->move->phase == net::MovePhase::kCopy &&
        imported_move_.load() != m->move->id) {
      step = ImportMove(m, *m->move);
    } else if (m->move && m->move->from == self) {
      drop = true;
      dropped_to = m->move->to;
      if (m->move->phase == net::MovePhase::kCopy && exported != m->move->id) {
        auto done = link_->MoveDone(m->move->id);
        step = !done.ok() ? done.status() : *done ? Status::OK() : ExportMove(*m, *m->move);
        if (step.ok()) exported = m->move->id;
      }
    } else if (drop) {
      // Nothing here is leaving: whatever no user of ours needs goes.
      const auto started = std::chrono::steady_clock::now();
      auto dropped = db_->DropForeign(dropped_to, [&](UserId u) { return m->OwnerOf(u) == self; });
      step = dropped.ok() ? Status::OK() : dropped.status();
      if (dropped.ok()) {
        drop = false;
        if (*dropped > 0) {
          Log("dropped " + std::to_string(*dropped) + " records of users of other shards in " +
              std::to_string(MsBetween(started, std::chrono::steady_clock::now())) +
              " ms (map version " + std::to_string(m->version) + ")");
        }
        std::lock_guard lock(stats_mu_);
        stats_.foreign_dropped += *dropped;
      }
    }
    if (!step.ok()) {
      Log("bucket move: " + step.ToString() + "; again shortly");
      seen = 0;  // try again even if the map stays
      if (!Backoff()) break;
    }
  }
}

Status ShardNode::ExportMove(const net::ShardMap& m, const net::BucketMove& mv) {
  // This shard stopped deciding for the moving users when it took this map (PlaceOf).
  // Everything it logged before must be in JetStream before the new owner decides for them:
  // its decisions (another shard applies them before the new owner's later ones, in stream
  // order) and its back-fills for them (before the new owner's posts).
  const uint64_t logged = db_->last_lsn();
  while (stats().forwarded_lsn < logged) {
    if (stop_.load()) return Status(Code::kUnavailable, "stopped");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto started = std::chrono::steady_clock::now();
  auto state = db_->ExportUsers([&m](UserId u) { return m.Moving(u); });
  const auto exported = std::chrono::steady_clock::now();
  if (!state.ok()) return state.status();
  const uint64_t attempt = std::random_device{}() * uint64_t{0x100000000} + std::random_device{}();
  const std::vector<std::string> pieces = EncodeMovePieces(attempt, *state);
  const std::string subject = link_->MoveSubjectOf(mv.id);
  for (size_t i = 0; i < pieces.size(); ++i) {
    const std::string id =
        "move:" + std::to_string(mv.id) + ":" + std::to_string(attempt) + ":" + std::to_string(i);
    RELGRAPH_RETURN_IF_ERROR(link_->Publish(
        subject, pieces[i], id,
        "publishing piece " + std::to_string(i) + " of move " + std::to_string(mv.id)));
  }
  Log("move " + std::to_string(mv.id) + ": the state of buckets " + std::to_string(mv.first) + "-" +
      std::to_string(mv.last) + " sent to shard " + std::to_string(mv.to) + " (" +
      std::to_string(state->size()) + " records, " + std::to_string(pieces.size()) +
      " pieces; listed in " + std::to_string(MsBetween(started, exported)) + " ms, sent in " +
      std::to_string(MsBetween(exported, std::chrono::steady_clock::now())) + " ms)");
  std::lock_guard lock(stats_mu_);
  ++stats_.moves_exported;
  return Status::OK();
}

Status ShardNode::ImportMove(const std::shared_ptr<const net::ShardMap>& m,
                             const net::BucketMove& mv) {
  const std::string subject = link_->MoveSubjectOf(mv.id);
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = options_.names.move_stream.c_str();
  so.Ordered = true;  // an ephemeral consumer from the subject's first message
  natsSubscription* sub = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_SubscribeSync(&sub, link_->js(), subject.c_str(), nullptr, &so, &jerr);
  if (s != NATS_OK) return net::NatsError("subscribing to " + subject, s, jerr);
  MoveAssembler assembler;
  Status result;  // stopped, or the map moved on: the move thread looks again
  while (!stop_.load() && map()->version == m->version) {
    natsMsg* msg = nullptr;
    s = natsSubscription_NextMsg(&msg, sub, 200);
    if (s == NATS_TIMEOUT) continue;
    if (s != NATS_OK) {
      result = net::NatsError("reading " + subject, s);
      break;
    }
    const Status added = assembler.Add(
        std::string_view(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg))));
    natsMsg_Destroy(msg);
    if (!added.ok()) {
      Log("move " + std::to_string(mv.id) + ": piece skipped: " + added.ToString());
      continue;
    }
    auto state = assembler.Take();
    if (!state.has_value()) continue;
    if (!state->ok()) {
      // Only a new attempt by the old owner (after its restart) can help: say so loudly.
      Log("move " + std::to_string(mv.id) + ": " + state->status().ToString() +
          "; waiting for another attempt by shard " + std::to_string(mv.from));
      continue;
    }
    const auto started = std::chrono::steady_clock::now();
    result = db_->MoveIn(mv.from, state->value(), [&m](UserId u) { return m->Moving(u); });
    const int64_t import_ms = MsBetween(started, std::chrono::steady_clock::now());
    if (!result.ok()) break;
    // Until the mark is stored, a restart brings the same state in again: harmless, as
    // nothing about the moving users was decided here meanwhile.
    while (!(result = link_->MarkMoveDone(mv.id)).ok() && Backoff()) {
      Log("move " + std::to_string(mv.id) + ": " + result.ToString() + "; again shortly");
    }
    if (!result.ok()) break;
    imported_move_ = mv.id;
    {
      std::lock_guard lock(map_mu_);
      inbox_hold_ = MustHoldInbox(*map_);
    }
    Log("move " + std::to_string(mv.id) + ": buckets " + std::to_string(mv.first) + "-" +
        std::to_string(mv.last) + " taken over from shard " + std::to_string(mv.from) + " (" +
        std::to_string(state->value().size()) + " records, brought in in " +
        std::to_string(import_ms) + " ms)");
    std::lock_guard lock(stats_mu_);
    ++stats_.moves_imported;
    break;
  }
  natsSubscription_Destroy(sub);
  return result;
}

}  // namespace relgraph
