#include "engine/durable/feed_snapshot.h"

#include <algorithm>

#include "storage/coding.h"

namespace relgraph {

namespace {
enum FeedRecordTag : uint8_t {
  kPosts = 1,
  kMutes = 2,
  kHides = 3,
  kCursors = 4,
  kEpochs = 5,
  kPrivate = 6,
  kBlocks = 7,
  kRequests = 8,
  kInbound = 9,
};

void PutHeader(std::string* r, uint8_t tag, uint64_t owner, size_t count) {
  r->push_back(static_cast<char>(tag));
  PutFixed64(r, owner);
  PutFixed32(r, static_cast<uint32_t>(count));
}
}  // namespace

Status AddFeedUsersToSnapshot(const std::vector<Feed::UserState>& users, SnapshotWriter* writer) {
  std::string r;
  for (const Feed::UserState& u : users) {
    if (!u.posts.empty()) {
      r.clear();
      PutHeader(&r, kPosts, u.user, u.posts.size());
      for (const FeedEntry& p : u.posts) {
        PutFixed64(&r, p.post);
        PutFixed64(&r, static_cast<uint64_t>(p.ts));
        r.push_back(static_cast<char>(p.kind));
      }
      RELGRAPH_RETURN_IF_ERROR(writer->AddFeedRecord(r));
    }
    for (const auto& [tag, ids] : {std::pair{kMutes, &u.mutes}, std::pair{kHides, &u.hides}}) {
      if (ids->empty()) continue;
      r.clear();
      PutHeader(&r, tag, u.user, ids->size());
      for (UserId id : *ids) PutFixed64(&r, id);
      RELGRAPH_RETURN_IF_ERROR(writer->AddFeedRecord(r));
    }
  }
  return Status::OK();
}

Status AddAccessToSnapshot(const Graph::AccessImage& access, SnapshotWriter* writer) {
  std::string r;
  for (const auto& [tag, items] :
       {std::pair{kBlocks, &access.blocks}, std::pair{kRequests, &access.requests}}) {
    // Runs of one owner, cut at kAccessItemsPerRecord.
    for (size_t at = 0; at < items->size();) {
      const UserId owner = (*items)[at].owner;
      size_t end = at;
      while (end < items->size() && (*items)[end].owner == owner &&
             end - at < kAccessItemsPerRecord) {
        ++end;
      }
      r.clear();
      PutHeader(&r, tag, owner, end - at);
      for (size_t i = at; i < end; ++i) {
        PutFixed64(&r, (*items)[i].peer);
        PutFixed64(&r, static_cast<uint64_t>((*items)[i].ts));
      }
      RELGRAPH_RETURN_IF_ERROR(writer->AddFeedRecord(r));
      at = end;
    }
  }
  const std::vector<UserId>& users = access.private_users;
  for (size_t at = 0; at < users.size(); at += kAccessItemsPerRecord) {
    const size_t n = std::min<size_t>(kAccessItemsPerRecord, users.size() - at);
    r.clear();
    PutHeader(&r, kPrivate, 0, n);
    for (size_t i = at; i < at + n; ++i) PutFixed64(&r, users[i]);
    RELGRAPH_RETURN_IF_ERROR(writer->AddFeedRecord(r));
  }
  return Status::OK();
}

Status AddCursorsToSnapshot(const CursorTable& cursors, SnapshotWriter* writer) {
  if (cursors.size() == 0) return Status::OK();
  std::string r;
  PutHeader(&r, kCursors, 0, cursors.size());
  cursors.ForEach([&](const std::string& name, const CursorState& c) {
    PutFixed64(&r, c.acked_lsn);
    PutFixed64(&r, static_cast<uint64_t>(c.acked_ms));
    r.push_back(static_cast<char>(name.size()));
    r.append(name);
  });
  return writer->AddFeedRecord(r);
}

Status AddEpochsToSnapshot(const EpochHistory& epochs, SnapshotWriter* writer) {
  if (epochs.epochs().size() <= 1) return Status::OK();  // epoch 1 alone is implicit
  std::string r;
  PutHeader(&r, kEpochs, 0, epochs.epochs().size());
  for (const Epoch& e : epochs.epochs()) {
    PutFixed64(&r, e.number);
    PutFixed64(&r, e.id);
    PutFixed64(&r, e.first_lsn);
    PutFixed64(&r, static_cast<uint64_t>(e.started_ms));
  }
  return writer->AddFeedRecord(r);
}

Status AddInboundToSnapshot(const InboundPositions& inbound, SnapshotWriter* writer) {
  if (inbound.size() == 0) return Status::OK();
  std::string r;
  PutHeader(&r, kInbound, 0, inbound.size());
  for (const auto& [origin, lsn] : inbound.all()) {
    PutFixed64(&r, origin);
    PutFixed64(&r, lsn);
  }
  return writer->AddFeedRecord(r);
}

namespace {

Status ApplyInboundRecord(Decoder& in, uint32_t count, InboundPositions& inbound) {
  if (in.remaining() / 16 < count)
    return Status::Corruption("feed block: inbound record cut short");
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t origin = 0, lsn = 0;
    in.U64(&origin);
    in.U64(&lsn);
    if (origin > UINT32_MAX || lsn == 0) {
      return Status::Corruption("feed block: inbound position of shard " + std::to_string(origin) +
                                " at LSN " + std::to_string(lsn));
    }
    inbound.Apply(static_cast<uint32_t>(origin), lsn);
  }
  return Status::OK();
}

Status ApplyEpochsRecord(Decoder& in, uint32_t count, EpochHistory& epochs) {
  if (in.remaining() / 32 < count) return Status::Corruption("feed block: epoch record cut short");
  std::vector<Epoch> list(count);
  for (Epoch& e : list) {
    in.U64(&e.number);
    in.U64(&e.id);
    in.U64(&e.first_lsn);
    in.I64(&e.started_ms);
  }
  Status s = epochs.Load(list);
  return s.ok() ? s : Status::Corruption("feed block: " + s.message());
}

Status ApplyCursorsRecord(Decoder& in, uint32_t count, CursorTable& cursors) {
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t lsn = 0;
    int64_t ts = 0;
    uint8_t len = 0;
    if (!in.U64(&lsn) || !in.I64(&ts) || !in.U8(&len) || in.remaining() < len) {
      return Status::Corruption("feed block: cursor record longer than its block");
    }
    const std::string_view name = in.Take(len);
    if (Status s = CursorTable::ValidateName(name); !s.ok()) {
      return Status::Corruption("feed block: bad cursor " + std::string(name));
    }
    cursors.Set(name, lsn, ts);  // lsn 0: acked before LSN 1
  }
  return Status::OK();
}

Status ApplyAccessRecord(Decoder& in, uint8_t tag, uint64_t owner, uint32_t count, Graph& g) {
  const size_t item = tag == kPrivate ? 8 : 16;
  if (in.remaining() / item < count)
    return Status::Corruption("feed block: access record cut short");
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t id = 0;
    int64_t ts = 0;
    in.U64(&id);
    if (tag != kPrivate) in.I64(&ts);
    const Status s = tag == kPrivate  ? g.ApplySetPrivate(id, true, 0)
                     : tag == kBlocks ? g.ApplyBlock(owner, id, ts)
                                      : g.ApplyRequest(id, owner, ts);
    if (!s.ok()) return Status::Corruption("feed block: " + s.message());
  }
  return Status::OK();
}

}  // namespace

Status ApplyFeedBlock(std::string_view block, Graph& g, Feed& feed, CursorTable& cursors,
                      EpochHistory& epochs, InboundPositions& inbound) {
  Decoder in(block);
  auto bad = [](const std::string& what) { return Status::Corruption("feed block: " + what); };
  while (in.remaining() > 0) {
    uint8_t tag;
    uint64_t owner;
    uint32_t count;
    if (!in.U8(&tag) || !in.U64(&owner) || !in.U32(&count)) return bad("record header cut short");
    if (tag == kCursors) {
      RELGRAPH_RETURN_IF_ERROR(ApplyCursorsRecord(in, count, cursors));
      continue;
    }
    if (tag == kEpochs) {
      RELGRAPH_RETURN_IF_ERROR(ApplyEpochsRecord(in, count, epochs));
      continue;
    }
    if (tag == kInbound) {
      RELGRAPH_RETURN_IF_ERROR(ApplyInboundRecord(in, count, inbound));
      continue;
    }
    if (tag == kPrivate || tag == kBlocks || tag == kRequests) {
      RELGRAPH_RETURN_IF_ERROR(ApplyAccessRecord(in, tag, owner, count, g));
      continue;
    }
    const size_t item = tag == kPosts ? 17 : 8;
    if (tag < kPosts || tag > kHides) return bad("unknown record tag " + std::to_string(tag));
    if (in.remaining() / item < count) return bad("record longer than its block");
    for (uint32_t i = 0; i < count; ++i) {
      uint64_t id = 0;  // the length check above makes every read succeed
      in.U64(&id);
      Status s;
      if (tag == kPosts) {
        int64_t ts = 0;
        uint8_t kind = 0;
        in.I64(&ts);
        in.U8(&kind);
        s = feed.ApplyPublish(g, owner, id, ts, kind, 0);
      } else if (tag == kMutes) {
        s = feed.ApplyMute(g, owner, id, true);
      } else {
        s = feed.ApplyHide(g, owner, id, true);
      }
      if (!s.ok()) return bad(s.message());
    }
  }
  return Status::OK();
}

}  // namespace relgraph
