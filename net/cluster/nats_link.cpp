#include "net/cluster/nats_link.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>

namespace relgraph::net {

Status NatsError(const std::string& what, natsStatus s, jsErrCode jerr) {
  std::string msg = what + ": " + natsStatus_GetText(s);
  if (jerr != 0) msg += " (JetStream error " + std::to_string(static_cast<int>(jerr)) + ")";
  if (const char* last = nats_GetLastError(nullptr); last != nullptr && last[0] != '\0') {
    msg += ": " + std::string(last);
  }
  return Status(Code::kUnavailable, msg);
}

Result<std::vector<std::string>> ParseNatsServers(const std::string& urls) {
  std::vector<std::string> servers;
  size_t at = 0;
  while (at <= urls.size()) {
    const size_t comma = std::min(urls.find(',', at), urls.size());
    std::string item = urls.substr(at, comma - at);
    const size_t first = item.find_first_not_of(' ');
    item = first == std::string::npos ? ""
                                      : item.substr(first, item.find_last_not_of(' ') + 1 - first);
    const bool nats = item.rfind("nats://", 0) == 0 && item.size() > 7;
    const bool tls = item.rfind("tls://", 0) == 0 && item.size() > 6;
    if (!nats && !tls) {
      return Status::InvalidArgument("NATS server '" + item +
                                     "', expected nats://HOST:PORT[,nats://HOST:PORT...] "
                                     "(or tls://HOST:PORT)");
    }
    servers.push_back(std::move(item));
    at = comma + 1;
  }
  return servers;
}

namespace {
std::mutex nats_tls_mu;
NatsTlsOptions nats_tls;  // nats_tls_mu
}  // namespace

void SetNatsTls(const NatsTlsOptions& options) {
  std::lock_guard lock(nats_tls_mu);
  nats_tls = options;
}

Result<bool> ApplyNatsTlsFlag(std::string_view arg, NatsTlsOptions* options) {
  const size_t eq = arg.find('=');
  const std::string_view key = arg.substr(0, eq);
  std::string* field = key == "--nats-tls-ca"     ? &options->ca_file
                       : key == "--nats-tls-cert" ? &options->cert_file
                       : key == "--nats-tls-key"  ? &options->key_file
                                                  : nullptr;
  if (field == nullptr) return false;
  if (eq == std::string_view::npos || eq + 1 == arg.size()) {
    return Status::InvalidArgument(std::string(key) + " wants a file: " + std::string(key) +
                                   "=FILE");
  }
  *field = std::string(arg.substr(eq + 1));
  return true;
}

Result<natsConnection*> ConnectNats(const std::string& urls) {
  NatsTlsOptions tls;
  {
    std::lock_guard lock(nats_tls_mu);
    tls = nats_tls;
  }
  auto servers = ParseNatsServers(urls);
  if (!servers.ok()) return servers.status();
  std::vector<const char*> list;
  for (const std::string& s : *servers) list.push_back(s.c_str());
  natsOptions* opts = nullptr;
  natsConnection* nc = nullptr;
  natsStatus s = natsOptions_Create(&opts);
  if (s == NATS_OK) s = natsOptions_SetServers(opts, list.data(), static_cast<int>(list.size()));
  if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts, -1);  // forever
  if (s == NATS_OK) s = natsOptions_SetReconnectWait(opts, 200);
  if (s == NATS_OK) s = natsOptions_SetNoRandomize(opts, false);  // spread the nodes' clients
  // A node that hangs or is cut off keeps the TCP connection open: found out by two pings
  // unanswered a second apart (the client's default, 2 minutes each, would stall the cluster's
  // traffic through that node for minutes), then the client moves to another node.
  if (s == NATS_OK) s = natsOptions_SetPingInterval(opts, kNatsPingIntervalMs);
  if (s == NATS_OK) s = natsOptions_SetMaxPingsOut(opts, kNatsMaxPingsOut);
  if (tls.enabled() || urls.find("tls://") != std::string::npos) {
    if (s == NATS_OK) s = natsOptions_SetSecure(opts, true);
    if (s == NATS_OK && !tls.ca_file.empty()) {
      s = natsOptions_LoadCATrustedCertificates(opts, tls.ca_file.c_str());
    }
    if (s == NATS_OK && !tls.cert_file.empty()) {
      s = natsOptions_LoadCertificatesChain(opts, tls.cert_file.c_str(), tls.key_file.c_str());
    }
    if (s != NATS_OK) {
      natsOptions_Destroy(opts);
      return NatsError("loading NATS's TLS files (--nats-tls-ca/-cert/-key)", s);
    }
  }
  if (s == NATS_OK) s = natsConnection_Connect(&nc, opts);
  natsOptions_Destroy(opts);
  if (s != NATS_OK) return NatsError("connecting to " + urls, s);
  return nc;
}

Result<std::optional<KvValue>> ReadKvFromLeader(jsCtx* js, const std::string& bucket,
                                                const std::string& key, const std::string& what) {
  // The bucket's stream and subject, as the client names them.
  const std::string stream = "KV_" + bucket, subject = "$KV." + bucket + "." + key;
  natsMsg* msg = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  const natsStatus s = js_GetLastMsg(&msg, js, stream.c_str(), subject.c_str(), nullptr, &jerr);
  if (s == NATS_NOT_FOUND) return std::optional<KvValue>();
  if (s != NATS_OK) return NatsError(what, s, jerr);
  const char* op = nullptr;
  const bool removed = natsMsgHeader_Get(msg, "KV-Operation", &op) == NATS_OK && op != nullptr &&
                       (std::string_view(op) == "DEL" || std::string_view(op) == "PURGE");
  std::optional<KvValue> v;
  if (!removed) {
    v = KvValue{std::string(natsMsg_GetData(msg), static_cast<size_t>(natsMsg_GetDataLength(msg))),
                natsMsg_GetSequence(msg)};
  }
  natsMsg_Destroy(msg);
  return v;
}

Result<std::unique_ptr<NatsLink>> NatsLink::Connect(const std::string& urls,
                                                    const ClusterNames& names) {
  std::unique_ptr<NatsLink> link(new NatsLink(names));
  auto nc = ConnectNats(urls);
  if (!nc.ok()) return nc.status();
  link->nc_ = *nc;
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.PublishAsync.MaxPending = 1 << 16;
  natsStatus s = natsConnection_JetStream(&link->js_, link->nc_, &jo);
  if (s != NATS_OK) return NatsError("JetStream context", s);
  return link;
}

NatsLink::~NatsLink() {
  if (kv_ != nullptr) kvStore_Destroy(kv_);
  if (js_ != nullptr) jsCtx_Destroy(js_);
  if (nc_ != nullptr) natsConnection_Destroy(nc_);
}

Status NatsLink::BindKv(bool create, int replicas) {
  if (kv_ != nullptr) return Status::OK();
  natsStatus s = js_KeyValue(&kv_, js_, names_.kv_bucket.c_str());
  if (s == NATS_NOT_FOUND && create) {
    kvConfig cfg;
    kvConfig_Init(&cfg);
    cfg.Bucket = names_.kv_bucket.c_str();
    cfg.History = 16;  // the last versions of the map, for an operator's look back
    cfg.StorageType = js_FileStorage;
    cfg.Replicas = replicas;
    s = js_CreateKeyValue(&kv_, js_, &cfg);
  }
  if (s == NATS_NOT_FOUND) {
    return Status::NotFound("no shard map: the key-value bucket " + names_.kv_bucket +
                            " does not exist (relgraph-admin cluster init creates it)");
  }
  return s == NATS_OK ? Status::OK() : NatsError("key-value bucket " + names_.kv_bucket, s);
}

Result<ShardMap> NatsLink::ReadMap() {
  RELGRAPH_RETURN_IF_ERROR(BindKv(false));
  auto read = ReadKvFromLeader(js_, names_.kv_bucket, names_.map_key, "reading the shard map");
  if (!read.ok()) return read.status();
  if (!read->has_value()) {
    return Status::NotFound("no shard map in " + names_.kv_bucket + "/" + names_.map_key +
                            " (relgraph-admin cluster init creates it)");
  }
  auto map = ParseShardMap((*read)->value);
  if (!map.ok()) return map.status();
  map->version = (*read)->revision;
  return map;
}

bool WrongRevision(natsStatus s) {
  const char* last = nats_GetLastError(nullptr);
  return s == NATS_ERR && last != nullptr &&
         std::string(last).find("wrong last sequence") != std::string::npos;
}

Result<uint64_t> NatsLink::CreateMap(const ShardMap& map, int replicas) {
  RELGRAPH_RETURN_IF_ERROR(ValidateShardMap(map));
  if (replicas < 1 || replicas > 5) {
    return Status::InvalidArgument("NATS replicas " + std::to_string(replicas) +
                                   ", expected 1 to 5");
  }
  RELGRAPH_RETURN_IF_ERROR(BindKv(true, replicas));
  const std::string text = EncodeShardMap(map);
  uint64_t rev = 0;
  natsStatus s =
      kvStore_Create(&rev, kv_, names_.map_key.c_str(), text.data(), static_cast<int>(text.size()));
  if (WrongRevision(s)) {
    return Status(Code::kAlreadyExists, "a shard map exists already (relgraph-admin cluster show)");
  }
  if (s != NATS_OK) return NatsError("creating the shard map", s);
  return rev;
}

Result<uint64_t> NatsLink::ReplaceMap(const ShardMap& map, uint64_t expected_version) {
  RELGRAPH_RETURN_IF_ERROR(ValidateShardMap(map));
  RELGRAPH_RETURN_IF_ERROR(BindKv(false));
  const std::string text = EncodeShardMap(map);
  uint64_t rev = 0;
  natsStatus s = kvStore_Update(&rev, kv_, names_.map_key.c_str(), text.data(),
                                static_cast<int>(text.size()), expected_version);
  if (WrongRevision(s)) {
    return Status(Code::kAlreadyExists, "the shard map changed after version " +
                                            std::to_string(expected_version) + "; read it again");
  }
  if (s != NATS_OK) return NatsError("replacing the shard map", s);
  return rev;
}

namespace {

// The map in `text` at key-value revision `revision` (its version); fn gets it. A map that
// does not parse is skipped and said to on_skip (stderr without one).
void Deliver(const std::string& text, uint64_t revision, const std::function<void(ShardMap)>& fn,
             const std::function<void(const std::string&)>& on_skip) {
  auto map = ParseShardMap(text);
  if (map.ok()) {
    map->version = revision;
    fn(std::move(*map));
  } else {
    const std::string why =
        "shard map revision " + std::to_string(revision) + " skipped: " + map.status().ToString();
    if (on_skip) {
      on_skip(why);
    } else {
      std::fprintf(stderr, "relgraph: %s\n", why.c_str());
    }
  }
}

}  // namespace

Status NatsLink::WatchMap(const std::atomic<bool>& stop, const std::function<void(ShardMap)>& fn,
                          int poll_ms, int check_ms,
                          const std::function<void(const std::string&)>& on_skip) {
  RELGRAPH_RETURN_IF_ERROR(BindKv(false));
  kvWatcher* w = nullptr;
  kvWatchOptions o;
  kvWatchOptions_Init(&o);
  o.IgnoreDeletes = true;
  natsStatus s = kvStore_Watch(&w, kv_, names_.map_key.c_str(), &o);
  if (s != NATS_OK) return NatsError("watching the shard map", s);
  Status result;
  uint64_t delivered = 0;  // the revision last handed to fn (0: none yet)
  auto checked = std::chrono::steady_clock::now();
  while (!stop.load()) {
    kvEntry* e = nullptr;
    s = kvWatcher_Next(&e, w, poll_ms);
    if (s != NATS_OK && s != NATS_TIMEOUT) {
      result = NatsError("watching the shard map", s);
      break;
    }
    if (e != nullptr) {  // nullptr: the initial state is delivered
      if (kvEntry_Operation(e) == kvOp_Put) {
        delivered = kvEntry_Revision(e);
        Deliver(std::string(static_cast<const char*>(kvEntry_Value(e)),
                            static_cast<size_t>(kvEntry_ValueLen(e))),
                delivered, fn, on_skip);
      }
      kvEntry_Destroy(e);
    }
    // The watch's consumer does not come back by itself after the store was lost and
    // restored (import-map): the key is read now and then, and a revision the watch did not
    // deliver (a lower one after a restore) is handed over and the watch started again.
    if (std::chrono::steady_clock::now() - checked < std::chrono::milliseconds(check_ms)) continue;
    checked = std::chrono::steady_clock::now();
    auto now = ReadKvFromLeader(js_, names_.kv_bucket, names_.map_key, "reading the shard map");
    if (!now.ok() || !now->has_value()) continue;  // not there (yet)
    const bool missed = (*now)->revision != delivered;
    if (missed) Deliver((*now)->value, (*now)->revision, fn, on_skip);
    if (missed) break;  // OK: watched again at once
  }
  kvWatcher_Destroy(w);
  return result;
}

Status EnsureJetStreamStream(jsCtx* js, const std::string& name, const std::string& subjects,
                             int replicas) {
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&si, js, name.c_str(), nullptr, &jerr);
  if (s == NATS_OK) {
    jsStreamInfo_Destroy(si);
    return Status::OK();
  }
  if (s != NATS_NOT_FOUND) return NatsError("stream info of " + name, s, jerr);
  const char* subject_list[] = {subjects.c_str()};
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = name.c_str();
  cfg.Subjects = subject_list;
  cfg.SubjectsLen = 1;
  cfg.Storage = js_FileStorage;
  cfg.Duplicates = int64_t{120} * 1'000'000'000;  // nanoseconds
  cfg.Replicas = replicas;
  s = js_AddStream(&si, js, &cfg, nullptr, &jerr);
  if (s != NATS_OK) {
    // Another node created it meanwhile.
    if (js_GetStreamInfo(&si, js, name.c_str(), nullptr, nullptr) == NATS_OK) {
      jsStreamInfo_Destroy(si);
      return Status::OK();
    }
    return NatsError("creating stream " + name, s, jerr);
  }
  jsStreamInfo_Destroy(si);
  return Status::OK();
}

Result<int> NatsLink::Replicas() {
  RELGRAPH_RETURN_IF_ERROR(BindKv(false));
  kvStatus* st = nullptr;
  natsStatus s = kvStore_Status(&st, kv_);
  if (s != NATS_OK) return NatsError("status of key-value bucket " + names_.kv_bucket, s);
  const int replicas = static_cast<int>(kvStatus_Replicas(st));
  kvStatus_Destroy(st);
  return replicas < 1 ? 1 : replicas;
}

Status NatsLink::EnsureStream() {
  auto replicas = Replicas();
  if (!replicas.ok()) return replicas.status();
  return EnsureJetStreamStream(js_, names_.stream, names_.subject_prefix + ".shard.*", *replicas);
}

Status NatsLink::Publish(const std::string& subject, std::string_view data,
                         const std::string& msg_id, const std::string& what) {
  natsMsg* msg = nullptr;
  natsStatus s =
      natsMsg_Create(&msg, subject.c_str(), nullptr, data.data(), static_cast<int>(data.size()));
  if (s == NATS_OK) s = natsMsgHeader_Set(msg, "Nats-Msg-Id", msg_id.c_str());
  jsPubAck* pa = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = 5000;
  if (s == NATS_OK) s = js_PublishMsg(&pa, js_, msg, &po, &jerr);
  if (pa != nullptr) jsPubAck_Destroy(pa);
  if (msg != nullptr) natsMsg_Destroy(msg);
  return s == NATS_OK ? Status::OK() : NatsError(what, s, jerr);
}

std::string NatsLink::SubjectOf(uint32_t shard) const {
  return names_.subject_prefix + ".shard." + std::to_string(shard);
}

std::string NatsLink::ConsumerOf(uint32_t shard) const {
  return "shard_" + std::to_string(shard);
}

}  // namespace relgraph::net

namespace relgraph::net {
namespace {
std::string MarkKey(uint64_t id, NatsLink::MoveMark mark) {
  return (mark == NatsLink::MoveMark::kDone ? "move_done_" : "move_in_") + std::to_string(id);
}
const char* MarkName(NatsLink::MoveMark mark) {
  return mark == NatsLink::MoveMark::kDone ? "done" : "state in";
}
}  // namespace

Result<ConsumerState> NatsLink::ConsumerStateOf(uint32_t shard) {
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = 2000;
  jsConsumerInfo* ci = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  const std::string consumer = ConsumerOf(shard);
  natsStatus s = js_GetConsumerInfo(&ci, js_, names_.stream.c_str(), consumer.c_str(), &jo, &jerr);
  if (s == NATS_NOT_FOUND) return Status::NotFound("no consumer " + consumer + " yet");
  if (s != NATS_OK) return NatsError("consumer info of " + consumer, s, jerr);
  ConsumerState state{ci->AckFloor.Stream, ci->NumPending,
                      static_cast<uint64_t>(ci->NumAckPending)};
  jsConsumerInfo_Destroy(ci);
  return state;
}

Result<uint64_t> NatsLink::StreamLastSequence() {
  jsStreamInfo* si = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  natsStatus s = js_GetStreamInfo(&si, js_, names_.stream.c_str(), nullptr, &jerr);
  if (s != NATS_OK) return NatsError("stream info of " + names_.stream, s, jerr);
  const uint64_t last = si->State.LastSeq;
  jsStreamInfo_Destroy(si);
  return last;
}

Result<uint64_t> NatsLink::LastSequenceOf(uint32_t shard) {
  natsMsg* msg = nullptr;
  jsErrCode jerr = static_cast<jsErrCode>(0);
  const std::string subject = SubjectOf(shard);
  natsStatus s = js_GetLastMsg(&msg, js_, names_.stream.c_str(), subject.c_str(), nullptr, &jerr);
  if (s == NATS_NOT_FOUND || jerr == JSNoMessageFoundErr) return uint64_t{0};
  if (s != NATS_OK) return NatsError("the last message on " + subject, s, jerr);
  const uint64_t seq = natsMsg_GetSequence(msg);
  natsMsg_Destroy(msg);
  return seq;
}

Status NatsLink::EnsureMoveStream() {
  auto replicas = Replicas();
  if (!replicas.ok()) return replicas.status();
  return EnsureJetStreamStream(js_, names_.move_stream, names_.subject_prefix + ".move.*",
                               *replicas);
}

std::string NatsLink::MoveSubjectOf(uint64_t id) const {
  return names_.subject_prefix + ".move." + std::to_string(id);
}

Status NatsLink::MarkMove(uint64_t id, MoveMark mark) {
  RELGRAPH_RETURN_IF_ERROR(BindKv(false));
  uint64_t rev = 0;
  natsStatus s = kvStore_PutString(&rev, kv_, MarkKey(id, mark).c_str(), MarkName(mark));
  return s == NATS_OK ? Status::OK()
                      : NatsError("marking move " + std::to_string(id) + " " + MarkName(mark), s);
}

Result<bool> NatsLink::MoveMarked(uint64_t id, MoveMark mark) {
  RELGRAPH_RETURN_IF_ERROR(BindKv(false));
  auto read = ReadKvFromLeader(js_, names_.kv_bucket, MarkKey(id, mark),
                               "reading move " + std::to_string(id) + "'s mark " + MarkName(mark));
  if (!read.ok()) return read.status();
  return read->has_value();
}

Status NatsLink::ForgetMove(uint64_t id) {
  RELGRAPH_RETURN_IF_ERROR(BindKv(false));
  natsStatus s = NATS_OK;
  for (MoveMark mark : {MoveMark::kStateIn, MoveMark::kDone}) {
    s = kvStore_Purge(kv_, MarkKey(id, mark).c_str(), nullptr);
    if (s != NATS_OK && s != NATS_NOT_FOUND) {
      return NatsError("forgetting move " + std::to_string(id) + "'s mark " + MarkName(mark), s);
    }
  }
  jsOptions jo;
  jsOptions_Init(&jo);
  const std::string subject = MoveSubjectOf(id);
  jo.Stream.Purge.Subject = subject.c_str();
  jsErrCode jerr = static_cast<jsErrCode>(0);
  s = js_PurgeStream(js_, names_.move_stream.c_str(), &jo, &jerr);
  if (s != NATS_OK && s != NATS_NOT_FOUND) {
    return NatsError("purging " + subject, s, jerr);
  }
  return Status::OK();
}

}  // namespace relgraph::net
