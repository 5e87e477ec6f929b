// Every command's request and reply body, as plain structs in the protocol's own vocabulary
// (net/ knows no engine type). Field order is wire order; docs/protocol.md lists the same.
//
// Each request names its opcode (kOpcode) and its reply type (Reply), so the client's generic
// Call<Request>() and the server's command table are typed end to end.
//
// Thread-safety: plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/protocol/protocol.h"
#include "net/protocol/wire_codec.h"

namespace relgraph::net {

// relation(a, b) on the wire: a set of bits, the engine's values, which never change. 0..3 are
// the follow states; the others appear only where blocks or follow requests exist.
enum class RelationCode : uint8_t {
  kNone = 0,
  kFollowing = 1,    // a follows b
  kFollowedBy = 2,   // b follows a
  kMutual = 3,       // both
  kRequested = 4,    // a asked to follow b, pending
  kRequestedBy = 8,  // b asked to follow a, pending
  kBlocking = 16,    // a blocks b
  kBlockedBy = 32,   // b blocks a (unless the server hides it)
};
inline constexpr uint8_t kRelationCodeBits = 0x3f;
// "none", "following", "mutual", "requested+followed_by", ... (bits joined by '+');
// "invalid" for a value with bits above kRelationCodeBits.
std::string_view RelationCodeName(RelationCode r);

struct Empty {
  auto WireTie() { return std::tie(); }
  auto WireTie() const { return std::tie(); }
};

// A body holds exactly its fields (the decoder refuses trailing bytes), so HELLO's reply grows
// only with the protocol version the client asked for: a version-1 client gets HelloReplyV1,
// a version-2 client HelloReply, which appends server_version.
struct HelloReply {
  uint16_t version = kProtocolVersion;  // the version this connection speaks: the client's
  uint32_t max_frame = kDefaultMaxFrame;
  std::string server;          // "relgraphd"
  std::string server_version;  // "0.1.0"; empty from a server that speaks only version 1
  RELGRAPH_WIRE_FIELDS(version, max_frame, server, server_version)
};
struct HelloRequest {
  static constexpr Opcode kOpcode = Opcode::kHello;
  using Reply = HelloReply;
  uint16_t version = kProtocolVersion;
  std::string token;  // empty when the server needs none
  RELGRAPH_WIRE_FIELDS(version, token)
};
// Version 1 of the handshake: what a server that speaks only version 1 understands.
struct HelloReplyV1 {
  uint16_t version = 1;
  uint32_t max_frame = kDefaultMaxFrame;
  std::string server;
  RELGRAPH_WIRE_FIELDS(version, max_frame, server)
};
struct HelloRequestV1 {
  static constexpr Opcode kOpcode = Opcode::kHello;
  using Reply = HelloReplyV1;
  uint16_t version = 1;
  std::string token;
  RELGRAPH_WIRE_FIELDS(version, token)
};

struct PingRequest : Empty {
  static constexpr Opcode kOpcode = Opcode::kPing;
  using Reply = Empty;
};

struct InfoField {
  std::string name;
  uint64_t value = 0;
  RELGRAPH_WIRE_FIELDS(name, value)
};
struct InfoReply {
  std::vector<InfoField> fields;
  RELGRAPH_WIRE_FIELDS(fields)
  // The value of field `name`, if present.
  std::optional<uint64_t> Get(std::string_view name) const;
};
// INFO's `durability` field: the server's --fsync mode as a number.
enum class DurabilityCode : uint64_t { kAlways = 0, kEverySec = 1, kNone = 2 };
// "always", "everysec", "none"; "unknown" for any other value.
std::string_view DurabilityCodeName(uint64_t code);

struct InfoRequest : Empty {
  static constexpr Opcode kOpcode = Opcode::kInfo;
  using Reply = InfoReply;
};

struct SnapshotReply {
  uint64_t lsn = 0;
  uint64_t edges = 0;
  uint64_t file_bytes = 0;
  int64_t created_ms = 0;
  RELGRAPH_WIRE_FIELDS(lsn, edges, file_bytes, created_ms)
};
struct SnapshotRequest : Empty {
  static constexpr Opcode kOpcode = Opcode::kSnapshot;
  using Reply = SnapshotReply;
};

struct FollowReply {
  bool created = false;
  RelationCode relation = RelationCode::kNone;
  int64_t followed_at = 0;
  RELGRAPH_WIRE_FIELDS(created, relation, followed_at)
};
struct FollowRequest {
  static constexpr Opcode kOpcode = Opcode::kFollow;
  using Reply = FollowReply;
  uint64_t follower = 0;
  uint64_t followee = 0;
  std::optional<int64_t> ts;  // absent: the server's clock
  RELGRAPH_WIRE_FIELDS(follower, followee, ts)
};

struct UnfollowReply {
  bool removed = false;
  RELGRAPH_WIRE_FIELDS(removed)
};
struct UnfollowRequest {
  static constexpr Opcode kOpcode = Opcode::kUnfollow;
  using Reply = UnfollowReply;
  uint64_t follower = 0;
  uint64_t followee = 0;
  RELGRAPH_WIRE_FIELDS(follower, followee)
};

struct RelationReply {
  RelationCode relation = RelationCode::kNone;
  RELGRAPH_WIRE_FIELDS(relation)
};
struct RelationRequest {
  static constexpr Opcode kOpcode = Opcode::kRelation;
  using Reply = RelationReply;
  uint64_t a = 0;
  uint64_t b = 0;
  RELGRAPH_WIRE_FIELDS(a, b)
};

struct RelationsReply {
  std::vector<RelationCode> relations;  // relation(a, others[i])
  RELGRAPH_WIRE_FIELDS(relations)
};
struct RelationsRequest {
  static constexpr Opcode kOpcode = Opcode::kRelations;
  using Reply = RelationsReply;
  uint64_t a = 0;
  std::vector<uint64_t> others;
  RELGRAPH_WIRE_FIELDS(a, others)
};

struct WireCursor {
  int64_t ts = 0;
  uint64_t user = 0;
  RELGRAPH_WIRE_FIELDS(ts, user)
  friend bool operator==(const WireCursor&, const WireCursor&) = default;
};
struct PageEntry {
  uint64_t user = 0;
  int64_t ts = 0;
  RelationCode viewer_relation = RelationCode::kNone;
  bool mutual = false;
  RELGRAPH_WIRE_FIELDS(user, ts, viewer_relation, mutual)
  friend bool operator==(const PageEntry&, const PageEntry&) = default;
};
struct PageReply {
  std::vector<PageEntry> entries;
  std::optional<WireCursor> next;
  RELGRAPH_WIRE_FIELDS(entries, next)
};
struct PageQuery {
  uint64_t user = 0;
  uint16_t limit = 20;
  uint32_t offset = 0;  // used only without `after`
  std::optional<WireCursor> after;
  std::optional<uint64_t> viewer;
  RELGRAPH_WIRE_FIELDS(user, limit, offset, after, viewer)
};
struct FollowingRequest : PageQuery {
  static constexpr Opcode kOpcode = Opcode::kFollowing;
  using Reply = PageReply;
};
struct FansRequest : PageQuery {
  static constexpr Opcode kOpcode = Opcode::kFans;
  using Reply = PageReply;
};
struct FriendsRequest : PageQuery {
  static constexpr Opcode kOpcode = Opcode::kFriends;
  using Reply = PageReply;
};

struct CountsReply {
  uint32_t following = 0;
  uint32_t fans = 0;
  uint32_t friends = 0;
  RELGRAPH_WIRE_FIELDS(following, fans, friends)
};
struct CountsRequest {
  static constexpr Opcode kOpcode = Opcode::kCounts;
  using Reply = CountsReply;
  uint64_t user = 0;
  RELGRAPH_WIRE_FIELDS(user)
};

struct KnownFollowersReply {
  uint32_t total = 0;
  std::vector<uint64_t> users;
  RELGRAPH_WIRE_FIELDS(total, users)
};
struct KnownFollowersRequest {
  static constexpr Opcode kOpcode = Opcode::kKnownFollowers;
  using Reply = KnownFollowersReply;
  uint64_t viewer = 0;
  uint64_t target = 0;
  uint16_t limit = 3;
  RELGRAPH_WIRE_FIELDS(viewer, target, limit)
};

struct RemoveUserReply {
  uint64_t edges_removed = 0;
  RELGRAPH_WIRE_FIELDS(edges_removed)
};
struct RemoveUserRequest {
  static constexpr Opcode kOpcode = Opcode::kRemoveUser;
  using Reply = RemoveUserReply;
  uint64_t user = 0;
  RELGRAPH_WIRE_FIELDS(user)
};

// ---- blocks, private accounts, follow requests (docs/access.md) ----------------------------

struct BlockReply {
  bool created = false;  // false: already blocked, nothing changed
  int64_t ts = 0;        // the block's time
  uint8_t removed = 0;   // bit 0: a -> b went, bit 1: b -> a went, bit 2: a request went
  RELGRAPH_WIRE_FIELDS(created, ts, removed)
};
struct BlockRequest {
  static constexpr Opcode kOpcode = Opcode::kBlock;
  using Reply = BlockReply;
  uint64_t user = 0;  // the blocker
  uint64_t blocked = 0;
  RELGRAPH_WIRE_FIELDS(user, blocked)
};

struct SetPrivateReply {
  bool changed = false;
  uint64_t approved = 0;  // requests approved by going public
  int64_t ts = 0;         // the change's time (0 when nothing changed)
  RELGRAPH_WIRE_FIELDS(changed, approved, ts)
};
struct SetPrivateRequest {
  static constexpr Opcode kOpcode = Opcode::kSetPrivate;
  using Reply = SetPrivateReply;
  uint64_t user = 0;
  bool is_private = false;
  RELGRAPH_WIRE_FIELDS(user, is_private)
};

struct IsPrivateReply {
  bool is_private = false;
  RELGRAPH_WIRE_FIELDS(is_private)
};
struct IsPrivateRequest {
  static constexpr Opcode kOpcode = Opcode::kIsPrivate;
  using Reply = IsPrivateReply;
  uint64_t user = 0;
  RELGRAPH_WIRE_FIELDS(user)
};

// A page of blocks or requests, and how many the whole list holds.
struct CountedPageReply {
  uint32_t total = 0;
  std::vector<PageEntry> entries;
  std::optional<WireCursor> next;
  RELGRAPH_WIRE_FIELDS(total, entries, next)
};
struct BlocksRequest : PageQuery {  // whom `user` blocks, newest first
  static constexpr Opcode kOpcode = Opcode::kBlocks;
  using Reply = CountedPageReply;
};
struct RequestsRequest : PageQuery {  // who asks to follow `user`, newest first
  static constexpr Opcode kOpcode = Opcode::kRequests;
  using Reply = CountedPageReply;
};

// ---- feed ----------------------------------------------------------------------------------

struct PublishReply {
  int64_t ts = 0;
  bool retained = true;
  uint64_t evicted = 0;  // the post this one pushed out of the author's newest K; 0: none
  RELGRAPH_WIRE_FIELDS(ts, retained, evicted)
};
struct PublishRequest {
  static constexpr Opcode kOpcode = Opcode::kPublish;
  using Reply = PublishReply;
  uint64_t author = 0;
  uint64_t post = 0;
  uint8_t kind = 0;
  std::optional<int64_t> ts;  // absent: the server's clock
  RELGRAPH_WIRE_FIELDS(author, post, kind, ts)
};

struct DeletePostRequest {
  static constexpr Opcode kOpcode = Opcode::kDeletePost;
  using Reply = Empty;
  uint64_t author = 0;
  uint64_t post = 0;
  RELGRAPH_WIRE_FIELDS(author, post)
};

struct PostCursor {
  int64_t ts = 0;
  uint64_t post = 0;
  RELGRAPH_WIRE_FIELDS(ts, post)
  friend bool operator==(const PostCursor&, const PostCursor&) = default;
};
struct FeedItem {
  uint64_t post = 0;
  uint64_t author = 0;
  int64_t ts = 0;
  uint8_t kind = 0;
  RELGRAPH_WIRE_FIELDS(post, author, ts, kind)
  friend bool operator==(const FeedItem&, const FeedItem&) = default;
};
struct FeedReply {
  std::vector<FeedItem> entries;
  std::optional<PostCursor> next;
  RELGRAPH_WIRE_FIELDS(entries, next)
};
struct FeedQuery {
  uint64_t user = 0;  // the reader (timeline) or the author (user_posts)
  uint16_t limit = 20;
  std::optional<PostCursor> after;
  uint64_t kinds = 0;  // bit k: include kind k; 0: every kind
  RELGRAPH_WIRE_FIELDS(user, limit, after, kinds)
};
struct TimelineRequest : FeedQuery {
  static constexpr Opcode kOpcode = Opcode::kTimeline;
  using Reply = FeedReply;
};
struct UserPostsRequest : FeedQuery {
  static constexpr Opcode kOpcode = Opcode::kUserPosts;
  using Reply = FeedReply;
};

struct ChangedReply {
  bool changed = false;
  RELGRAPH_WIRE_FIELDS(changed)
};
// mute/unmute: `user` (un)mutes `other`; hide/unhide: `user` (the author) (un)hides its posts
// from `other`.
struct PairQuery {
  uint64_t user = 0;
  uint64_t other = 0;
  RELGRAPH_WIRE_FIELDS(user, other)
};
struct MuteRequest : PairQuery {
  static constexpr Opcode kOpcode = Opcode::kMute;
  using Reply = ChangedReply;
};
struct UnmuteRequest : PairQuery {
  static constexpr Opcode kOpcode = Opcode::kUnmute;
  using Reply = ChangedReply;
};
struct HideRequest : PairQuery {
  static constexpr Opcode kOpcode = Opcode::kHide;
  using Reply = ChangedReply;
};
struct UnhideRequest : PairQuery {
  static constexpr Opcode kOpcode = Opcode::kUnhide;
  using Reply = ChangedReply;
};

struct UserListReply {
  std::vector<uint64_t> users;  // in id order
  RELGRAPH_WIRE_FIELDS(users)
};
struct MutesRequest {
  static constexpr Opcode kOpcode = Opcode::kMutes;
  using Reply = UserListReply;
  uint64_t user = 0;
  RELGRAPH_WIRE_FIELDS(user)
};
struct HidesRequest {
  static constexpr Opcode kOpcode = Opcode::kHides;
  using Reply = UserListReply;
  uint64_t user = 0;  // the author
  RELGRAPH_WIRE_FIELDS(user)
};

// Blocks and requests between two users (PairQuery's user, other): unblock: user lifts its
// block of other. approve, reject: user (the private account) answers other's request.
// withdraw: user takes back its request to other.
struct UnblockRequest : PairQuery {
  static constexpr Opcode kOpcode = Opcode::kUnblock;
  using Reply = ChangedReply;
};
struct ApproveRequest : PairQuery {  // reply: the new edge other -> user, as FOLLOW's
  static constexpr Opcode kOpcode = Opcode::kApprove;
  using Reply = FollowReply;
};
struct RejectRequest : PairQuery {
  static constexpr Opcode kOpcode = Opcode::kReject;
  using Reply = ChangedReply;
};
struct WithdrawRequest : PairQuery {
  static constexpr Opcode kOpcode = Opcode::kWithdraw;
  using Reply = ChangedReply;
};

// The body of every error reply and notice.
// ---- the change stream (docs/change-stream.md) ----

// Where a subscription starts.
enum class SubscribeFrom : uint8_t {
  kLsn = 0,     // at `lsn` (>= 1)
  kNow = 1,     // at the first change after the SUBSCRIBE (lsn must be 0)
  kCursor = 2,  // after the named cursor's acknowledged LSN (name required, lsn must be 0)
};
struct SubscribeReply {
  uint64_t first_lsn = 0;   // the LSN the stream starts at
  uint64_t newest_lsn = 0;  // the newest LSN logged when it started
  RELGRAPH_WIRE_FIELDS(first_lsn, newest_lsn)
};
struct SubscribeRequest {
  static constexpr Opcode kOpcode = Opcode::kSubscribe;
  using Reply = SubscribeReply;
  SubscribeFrom from = SubscribeFrom::kNow;
  uint64_t lsn = 0;
  uint32_t kinds = 0;  // bit k: event kind k (1..9, 12..18); 0: every kind
  std::string name;    // a named cursor, or empty
  RELGRAPH_WIRE_FIELDS(from, lsn, kinds, name)
};

// Event kinds on the wire: the WAL record types (docs/wal-format.md); the values never change.
enum class EventKind : uint8_t {
  kFollow = 1,
  kUnfollow = 2,
  kRemoveUser = 3,
  kPublish = 4,
  kDeletePost = 5,
  kMute = 6,
  kUnmute = 7,
  kHide = 8,
  kUnhide = 9,
  kBlock = 12,
  kUnblock = 13,
  kSetPrivate = 14,
  kRequest = 15,  // a follow of a private account
  kApprove = 16,
  kReject = 17,
  kWithdraw = 18,
};
inline constexpr uint32_t kAllEventKinds = 0x7f3fe;
// "follow", ... as the opcodes spell them ("request" for kRequest); "unknown" else.
std::string_view EventKindName(EventKind kind);

struct WireEvent {
  uint64_t lsn = 0;
  EventKind kind = EventKind::kFollow;
  int64_t ts = 0;
  uint64_t a = 0;        // follower, user, author, blocker, requester (request, withdraw) or
                         // target (approve, reject)
  uint64_t b = 0;        // followee, other, post, from, blocked, target or requester (0 for
                         // remove_user and set_private)
  bool friends = false;  // follow, approve: it made the two friends
  // publish: the post's kind; block: what it removed (bit 0: a -> b, bit 1: b -> a, bit 2: a
  // request); set_private: 1 private, 0 public (pending requests were approved at ts).
  uint8_t detail = 0;
  uint64_t evicted = 0;  // publish: the post it pushed out of the author's newest K, or 0
  RELGRAPH_WIRE_FIELDS(lsn, kind, ts, a, b, friends, detail, evicted)
};
inline constexpr size_t kWireEventBytes = 43;
// An EVENTS frame's body: events in LSN order, and the LSN the stream goes on from.
struct EventsBody {
  uint64_t next_lsn = 0;
  std::vector<WireEvent> events;
  RELGRAPH_WIRE_FIELDS(next_lsn, events)
};

// Named cursors (docs/change-stream.md, "Named cursors").
struct AckRequest {
  static constexpr Opcode kOpcode = Opcode::kAck;
  using Reply = Empty;
  std::string name;
  uint64_t lsn = 0;  // every change up to here is handled; the cursor resumes at lsn + 1
  RELGRAPH_WIRE_FIELDS(name, lsn)
};
struct CursorEntry {
  std::string name;
  uint64_t acked_lsn = 0;
  int64_t acked_ms = 0;
  bool expired = false;  // the WAL no longer holds acked_lsn + 1
  RELGRAPH_WIRE_FIELDS(name, acked_lsn, acked_ms, expired)
};
struct CursorsReply {
  std::vector<CursorEntry> cursors;  // name order
  RELGRAPH_WIRE_FIELDS(cursors)
};
struct CursorsRequest : Empty {
  static constexpr Opcode kOpcode = Opcode::kCursors;
  using Reply = CursorsReply;
};
struct DeleteCursorRequest {
  static constexpr Opcode kOpcode = Opcode::kDeleteCursor;
  using Reply = Empty;
  std::string name;
  RELGRAPH_WIRE_FIELDS(name)
};

// FETCH_SNAPSHOT: the newest snapshot file, pushed in SNAPSHOT_DATA frames after the reply.
struct FetchSnapshotReply {
  uint64_t lsn = 0;         // the state it holds is the state at this LSN
  uint64_t file_bytes = 0;  // the whole file; the SNAPSHOT_DATA frames add up to it
  RELGRAPH_WIRE_FIELDS(lsn, file_bytes)
};
struct FetchSnapshotRequest : Empty {
  static constexpr Opcode kOpcode = Opcode::kFetchSnapshot;
  using Reply = FetchSnapshotReply;
};
// A SNAPSHOT_DATA body is `offset:u64` followed by the file's bytes from there to the end of
// the frame (not a length-prefixed field: a chunk may be close to max_frame).
inline constexpr size_t kSnapshotDataHeaderBytes = 8;

// ---- replication (docs/replication.md) ----

// REPLICATE: a replica asks for every WAL record from from_lsn on, raw, as the primary logged
// them; the primary first checks that the replica's history is its own (epoch and id of the
// replica's newest record, which is from_lsn - 1).
struct ReplicateReply {
  uint64_t epoch = 0;  // the primary's current epoch
  uint64_t epoch_id = 0;
  uint64_t newest_lsn = 0;  // the primary's newest LSN when replication started
  RELGRAPH_WIRE_FIELDS(epoch, epoch_id, newest_lsn)
};
struct ReplicateRequest {
  static constexpr Opcode kOpcode = Opcode::kReplicate;
  using Reply = ReplicateReply;
  uint64_t from_lsn = 0;  // the replica's newest LSN + 1
  uint64_t epoch = 0;     // the epoch of the replica's newest record (1 when it has none)
  uint64_t epoch_id = 0;
  std::string name;  // how the replica calls itself (its address), for REPLICATION and acks
  RELGRAPH_WIRE_FIELDS(from_lsn, epoch, epoch_id, name)
};
// One WAL record as logged (docs/wal-format.md, "Record types").
struct WireRecord {
  uint8_t type = 0;
  std::string payload;
  RELGRAPH_WIRE_FIELDS(type, payload)
};
// A RECORDS frame's body: records first_lsn, first_lsn + 1, ...; none in a heartbeat, sent when
// nothing was sent for half a second.
struct RecordsBody {
  uint64_t first_lsn = 0;
  uint64_t newest_lsn = 0;  // the primary's newest LSN logged when the frame was made
  int64_t sent_us = 0;      // the primary's clock (µs since the Unix epoch) then
  std::vector<WireRecord> records;
  RELGRAPH_WIRE_FIELDS(first_lsn, newest_lsn, sent_us, records)
};
// The fixed start of a RECORDS body: first_lsn:u64 newest_lsn:u64 sent_us:i64 and the
// records' count (the list's u16), before the records.
constexpr size_t kRecordsHeaderBytes = 26;
// Writes that start at p (kRecordsHeaderBytes bytes): for a sender that appends the records
// in place and knows their count only at the end.
void EncodeRecordsHeader(char* p, uint64_t first_lsn, uint64_t newest_lsn, int64_t sent_us,
                         size_t count);
// The clock of sent_us: the wall clock, in µs since the Unix epoch (a replica's lag in ms is
// its own reading minus the primary's).
int64_t RecordsClockUs();
// RecordsBody without a copy per record: header fields into *header (records left empty),
// then fn(lsn, type, payload) for each record, the views pointing into `body`.
template <typename Fn>
Status ForEachWireRecord(std::string_view body, RecordsBody* header, Fn&& fn);

struct ReplicaAckRequest {
  static constexpr Opcode kOpcode = Opcode::kReplicaAck;
  using Reply = Empty;
  std::string name;          // as in its REPLICATE
  uint64_t applied_lsn = 0;  // applied (readable on the replica)
  uint64_t durable_lsn = 0;  // fsynced in the replica's WAL
  RELGRAPH_WIRE_FIELDS(name, applied_lsn, durable_lsn)
};

struct PromoteReply {
  uint64_t epoch = 0;  // the new epoch
  uint64_t epoch_id = 0;
  uint64_t first_lsn = 0;  // its epoch record's LSN
  RELGRAPH_WIRE_FIELDS(epoch, epoch_id, first_lsn)
};
struct PromoteRequest {
  static constexpr Opcode kOpcode = Opcode::kPromote;
  using Reply = PromoteReply;
  // false: refused while another replica this node knows of is further ahead (or a primary of
  // a newer epoch); true: promote anyway.
  bool force = false;
  RELGRAPH_WIRE_FIELDS(force)
};

enum class ReplicationRole : uint8_t { kPrimary = 0, kReplica = 1 };
struct ReplicaEntry {  // a replica connected to this primary
  std::string name;
  uint64_t applied_lsn = 0;
  uint64_t durable_lsn = 0;
  uint64_t ack_age_ms = 0;  // since its last REPLICA_ACK
  RELGRAPH_WIRE_FIELDS(name, applied_lsn, durable_lsn, ack_age_ms)
};
struct ReplicationReply {
  ReplicationRole role = ReplicationRole::kPrimary;
  std::string primary;  // a replica's primary, "host:port"; empty on a primary
  // A replica's link: "connecting", "snapshot", "streaming", "diverged", "failed" (message
  // says why); "primary" on a primary.
  std::string state;
  std::string message;
  uint64_t epoch = 0;
  uint64_t epoch_id = 0;
  uint64_t applied_lsn = 0;  // this node's newest LSN
  uint64_t primary_lsn = 0;  // a replica: the primary's newest it knows of
  uint64_t lag_ms = 0;       // a replica: age of the oldest record it knows of but lacks
  uint32_t sync_replicas = 0;
  std::vector<ReplicaEntry> replicas;
  RELGRAPH_WIRE_FIELDS(role, primary, state, message, epoch, epoch_id, applied_lsn, primary_lsn,
                       lag_ms, sync_replicas, replicas)
};
struct ReplicationRequest : Empty {
  static constexpr Opcode kOpcode = Opcode::kReplication;
  using Reply = ReplicationReply;
};

struct ErrorBody {
  int64_t detail = 0;  // Status::detail(): retry-after ms for rate_limited, else 0
  std::string message;
  RELGRAPH_WIRE_FIELDS(detail, message)
};

template <typename Fn>
Status ForEachWireRecord(std::string_view body, RecordsBody* header, Fn&& fn) {
  auto cut = [] { return Status(Code::kProtocolError, "records body cut short"); };
  auto u64 = [&](size_t at) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(body[at + i]);
    return v;
  };
  if (body.size() < kRecordsHeaderBytes) return cut();
  header->first_lsn = u64(0);
  header->newest_lsn = u64(8);
  header->sent_us = static_cast<int64_t>(u64(16));
  const size_t count = static_cast<uint8_t>(body[24]) | size_t{static_cast<uint8_t>(body[25])} << 8;
  size_t at = kRecordsHeaderBytes;
  for (size_t i = 0; i < count; ++i) {
    if (body.size() - at < 3) return cut();
    const uint8_t type = static_cast<uint8_t>(body[at]);
    const size_t len =
        static_cast<uint8_t>(body[at + 1]) | size_t{static_cast<uint8_t>(body[at + 2])} << 8;
    at += 3;
    if (body.size() - at < len) return cut();
    RELGRAPH_RETURN_IF_ERROR(fn(header->first_lsn + i, type, body.substr(at, len)));
    at += len;
  }
  if (at != body.size()) return Status(Code::kProtocolError, "records body has trailing bytes");
  return Status::OK();
}

}  // namespace relgraph::net
