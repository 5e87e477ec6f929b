// Graph: the in-memory follow graph. Usable on its own, embedded (no server); Db (engine/db.h)
// makes it durable with the WAL and snapshots, and relgraphd serves a Db over TCP.
//
// Model: users are 64-bit ids (0 is invalid); a user exists once an edge names it, and an
// unknown user has empty lists and zero counts. follow(a, b) creates the directed edge a -> b
// with a follow time; mutual edges make a and b friends, and the friendship's time is the later
// of the two follow times. Every list is newest first by (time, user id), both descending.
//
// Storage (see docs/design.md for the memory budget): users are interned to dense internal ids;
// each user record holds a following list (FollowingList, bounded by the follow cap), a fan list
// (FanList: one array when short, chunks with a Fenwick index when long) and three O(1)
// counters. Each edge is stored once per side; both copies carry the kMutual bit.
//
// Blocks, private accounts and follow requests (docs/access.md): a block removes both edges
// and any request between its two users and forbids new ones (kBlocked); a follow of a
// private account becomes a pending request that the account approves (the edge appears,
// with the approval time), rejects, or its sender withdraws. They live in two PairLists
// beside the user records, and two bits of each user record (private; "has a block or a
// request") keep the relation check of users without any at its old cost.
//
// Errors: every method that takes user input returns Status/Result; nothing asserts on input.
// Thread-safety: not thread-safe. Const methods may run concurrently with each other (they
// mutate nothing, not even caches); a mutating method needs exclusive access. The durable Db
// and the server wrap a Graph in a reader/writer lock or a single engine thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/graph/memory_usage.h"
#include "engine/graph/edge_entry.h"
#include "engine/graph/entry_array.h"
#include "engine/graph/fan_list.h"
#include "engine/graph/following_list.h"
#include "engine/graph/id_map.h"
#include "engine/graph/pair_lists.h"
#include "engine/graph/time_resolution.h"
#include "engine/graph/rate_limiter.h"
#include "engine/graph/slab_allocator.h"
#include "engine/mem/chunked_array.h"
#include "engine/mem/huge_pages.h"
#include "engine/types.h"
#include "storage/status.h"

namespace relgraph {

// Checks ranges of every option; the Graph constructor REQUIRES this to be OK.
Status ValidateGraphOptions(const GraphOptions& options);

// kInvalidArgument unless ts is in [0, kMaxTimestampMs], naming `what` ("timestamp", "cursor
// time"). Every time a caller passes in (follow times, post times, cursors) is checked so.
Status CheckTimestamp(TimestampMs ts, const char* what);
// What every replayed pair record is checked for first: two distinct nonzero ids, a time in range.
Status CheckReplayPair(UserId a, UserId b, TimestampMs ts, const char* what);

class Graph {
 public:
  // REQUIRES: ValidateGraphOptions(options).ok().
  explicit Graph(const GraphOptions& options = {});
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // ---- mutations ------------------------------------------------------------------------------
  // Creates a -> b at the engine clock's time. Errors: kInvalidUserId (an id is 0),
  // kSelfFollow (a == b), kFollowLimit (a follows max_following users already), kRateLimited
  // (Status::retry_after_ms() says when to retry). Following an existing edge is not an error:
  // created == false and the original time is kept. A failed call changes nothing (it does not
  // even create the users it names). `known`: a's and b's internal ids from WriteAhead::Known,
  // in a batch loop (nullptr: looked up here).
  Result<FollowOutcome> Follow(UserId a, UserId b, const InternalId* known = nullptr);
  // As Follow, with the caller's time (imports, replay). Also kInvalidArgument when ts is
  // outside [0, kMaxTimestampMs]. The cap and the rate limiter still apply.
  Result<FollowOutcome> FollowAt(UserId a, UserId b, TimestampMs ts,
                                 const InternalId* known = nullptr);
  // Bulk import (edge lists, restores): FollowAt for each edge in order, without the rate
  // limiter, software-pipelined so the cache misses of consecutive edges overlap. Self-loops,
  // duplicates and over-cap edges are counted, not errors; an id of 0 or a time out of range
  // stops the import with an error whose detail() is the edge's index (the edges before it stay).
  Result<ImportStats> Import(std::span<const ImportEdge> edges);
  // true: the edge was removed; false: a did not follow b (no change).
  Result<bool> Unfollow(UserId a, UserId b);
  // Removes every edge into and out of `a` (account deletion), its blocks (both ways), its
  // requests (both ways) and its private mark; returns how many edges were removed.
  // O(following + fans * following-list length of each fan + its blocks and requests).
  // BeginRemoveUser then RunSteps until done, in one call.
  Result<uint64_t> RemoveUser(UserId a);

  // Calls made by the calls below for each edge they create (created = true) or remove, with
  // the internal ids of follower and followee, right after the graph changed (the feed's hooks).
  using EdgeHook = std::function<void(InternalId follower, InternalId followee, bool created)>;

  // ---- operations in steps (docs/design.md, "Operations in steps") ----------------------------
  // Removing a user costs O(fans + the requests it holds), going public O(pending requests):
  // Db runs both in steps (Begin*, then RunSteps(n) n units at a time), so that other writers
  // wait for one step at a time. At most one is unfinished; what the graph looks like meanwhile,
  // and how every other call meets it, is engine/graph/graph_steps.cpp's opening comment.
  // BeginRemoveUser: edges removed so far.
  Result<uint64_t> BeginRemoveUser(UserId a);
  // SetPrivate, with going public's approvals left to RunSteps (approved is 0 then).
  Result<SetPrivateOutcome> SetPrivateInSteps(UserId a, bool on, const EdgeHook& on_edge = nullptr);
  struct StepsDone {
    uint64_t edges_removed = 0;
    uint64_t approved = 0;
    bool more = false;  // work remains
  };
  StepsDone RunSteps(uint32_t max_units);
  bool unfinished() const { return unfinished_.has_value(); }
  bool IsBeingRemoved(UserId a) const;
  // The id index grows in steps (engine/graph/id_map.h): each new user moves a few users into
  // the larger table; a Db's background worker moves the rest between writes with
  // GrowIdIndex(n) (n users, under the exclusive lock; returns whether more remain).
  bool id_index_growing() const { return ids_.growing(); }
  bool GrowIdIndex(size_t users) { return ids_.Grow(users); }
  // What a replayed or remote change of the pair (a, b) does first (0: no second user): ends
  // a removal naming either user, approves a pending request between them of an account
  // going public. The Apply* forms call it themselves. O(1) with nothing unfinished.
  void Settle(UserId a, UserId b);

  // ---- blocks, private accounts, follow requests (docs/access.md) ---------------------------
  // a blocks b at the engine clock's time: a -> b and b -> a go, a pending request between
  // them goes, and neither may follow or ask to follow the other until a unblocks (kBlocked).
  // Errors: kInvalidUserId, kInvalidArgument (a == b), kLimitExceeded (a blocks max_blocks
  // users already). Blocking again: created == false, nothing changes. O(following of both).
  Result<BlockOutcome> Block(UserId a, UserId b, const EdgeHook& on_edge = nullptr);
  // true: the block was lifted; it restores nothing (no edge, no request).
  Result<bool> Unblock(UserId a, UserId b);
  // Marks `a` private (follows of it become requests) or public. Going public approves every
  // pending request at the engine clock's time (on_edge sees each new edge): O(requests).
  Result<SetPrivateOutcome> SetPrivate(UserId a, bool on, const EdgeHook& on_edge = nullptr);
  Result<bool> IsPrivate(UserId a) const;
  // `target` accepts `requester`'s request: requester -> target is created at the engine
  // clock's time (no rate limit; the cap was counted when the request was made). kNotFound
  // when there is no such request.
  Result<FollowOutcome> Approve(UserId target, UserId requester, const EdgeHook& on_edge = nullptr);
  // The request requester -> target goes, answered by the target (Reject) or taken back by the
  // requester (Withdraw); true when there was one.
  Result<bool> Reject(UserId target, UserId requester);
  Result<bool> Withdraw(UserId requester, UserId target);
  // Whom `a` blocks, and who asks to follow `a`: newest first, paged like Fans (offset or
  // cursor, O(log n + limit) at any depth), with the viewer's relation to each entry.
  Result<Page> Blocks(UserId a, const PageRequest& request) const;
  Result<Page> Requests(UserId a, const PageRequest& request) const;
  // Replay: idempotent "ensure" forms with the outcome already decided (any replay mode).
  Status ApplyBlock(UserId a, UserId b, TimestampMs ts, const EdgeHook& on_edge = nullptr);
  Status ApplyUnblock(UserId a, UserId b);
  Status ApplySetPrivate(UserId a, bool on, TimestampMs ts, const EdgeHook& on_edge = nullptr);
  Status ApplyRequest(UserId requester, UserId target, TimestampMs ts);
  Status ApplyApprove(UserId target, UserId requester, TimestampMs ts,
                      const EdgeHook& on_edge = nullptr);
  Status ApplyRemoveRequest(UserId target, UserId requester);
  // Pair queries (O(1) or O(list)).
  bool BlockStands(UserId a, UserId b) const;  // a blocks b or b blocks a
  bool HasRequest(UserId requester, UserId target) const;
  bool HasEdge(UserId a, UserId b) const;
  std::vector<UserId> RequestersOf(UserId target) const;  // pending requests to target
  std::vector<UserId> BlockersOf(UserId blocked) const;   // who blocks `blocked`
  // Whole-state access (snapshots, digests): fn(blocker, blocked, ts); fn(target, requester,
  // ts); fn(user) for each private user.
  void ForEachBlock(const std::function<void(UserId, UserId, TimestampMs)>& fn) const;
  void ForEachRequest(const std::function<void(UserId, UserId, TimestampMs)>& fn) const;
  void ForEachPrivate(const std::function<void(UserId)>& fn) const;
  // The whole access state as external ids, for a snapshot: copied under the same exclusive
  // hold that fixes the graph's image, so that it is the state at the image's LSN (replay of
  // set_private, which approves every request pending then, needs exactly that state).
  // O(blocks + requests + private users).
  struct AccessItem {
    UserId owner = 0;  // the blocker; the private account asked
    UserId peer = 0;   // the blocked user; the requester
    TimestampMs ts = 0;
  };
  struct AccessImage {
    std::vector<UserId> private_users;
    std::vector<AccessItem> blocks;    // grouped by owner, each owner's oldest first
    std::vector<AccessItem> requests;  // likewise
  };
  void CopyAccess(AccessImage* out) const;
  // The requests `requester` has pending (owner: the account asked; peer: requester), O(their
  // number).
  std::vector<AccessItem> RequestsSentBy(UserId requester) const;
  size_t block_count() const { return blocks_.size(); }
  size_t request_count() const { return requests_.size(); }

  // ---- replay (WAL records, fuzzy snapshots) ---------------------------------------------------
  // Idempotent "ensure" forms of the mutations, with the outcome already decided: no cap, no
  // rate limit, no clock. Replaying records L..N over a state that matches any LSN in [L-1, N]
  // yields the state at N (docs/wal-format.md). kInvalidArgument/kInvalidUserId for input no
  // writer could have logged (id 0, self-follow, time out of range).
  // How much a replayed op may assume about the state it meets:
  // - kEnsure: anything between the op's LSN and the log's start (a fuzzy snapshot): follow
  //   and unfollow are idempotent "ensure" forms;
  // - kExact: exactly the state the op was logged against (replay from empty or from a
  //   point-in-time image). A follow is logged only when it created its edge, so a follow
  //   skips the existence check, an O(following) scan that was a fifth of replay;
  // - kChecked: the same state, but proved rather than trusted (a replica applying its
  //   primary's records): a follow of an edge that exists, or an unfollow of one that does
  //   not, fails with kAlreadyExists / kNotFound and changes nothing.
  enum class ReplayMode : uint8_t { kEnsure, kExact, kChecked };
  // Ensures a -> b exists with time ts (replacing a different time), under `mode`.
  Status ApplyFollow(UserId a, UserId b, TimestampMs ts, ReplayMode mode = ReplayMode::kEnsure);
  // Ensures a -> b does not exist, under `mode`.
  Status ApplyUnfollow(UserId a, UserId b, ReplayMode mode = ReplayMode::kEnsure);
  Status ApplyRemoveUser(UserId a);  // ensures a has no edges
  // Applies ops in order, as the three calls above, prefetching ahead so the cache misses of
  // consecutive ops overlap (WAL replay). On error, Status::detail() is the failing op's index
  // and the ops before it are applied. `on_applied`, when set, is called after each applied
  // follow or unfollow with the internal ids of its two users (still in cache: a replica's
  // feed hooks run there).
  struct ReplayOp {
    enum Kind : uint8_t { kFollow, kUnfollow, kRemoveUser } kind;
    UserId a = 0, b = 0;
    TimestampMs ts = 0;
    // true: a change decided elsewhere, which may have crossed others on its way
    // (engine/durable/access_replay.h). It runs as kEnsure whatever the batch's mode, and a
    // follow across a standing block is dropped (CrossingFollow).
    bool remote = false;
  };
  using AppliedEdgeHook = std::function<void(const ReplayOp& op, InternalId a, InternalId b)>;
  Status ApplyBatch(std::span<const ReplayOp> ops, ReplayMode mode = ReplayMode::kEnsure,
                    const AppliedEdgeHook& on_applied = nullptr);

  // ---- queries --------------------------------------------------------------------------------
  Result<Relation> GetRelation(UserId a, UserId b) const;  // relation(a, a) is kNone
  // relation(a, b) for each b, in order; 1..kMaxBatchSize ids, each nonzero.
  Result<std::vector<Relation>> GetRelations(UserId a, std::span<const UserId> others) const;

  // Pages of a's lists. limit 1..kMaxPageLimit. With `after`, the entries strictly older than
  // the cursor (offset ignored): walking by cursors returns every entry present throughout the
  // walk exactly once. Following and fans pages cost O(log n + limit) at any depth or offset;
  // friends pages O(f log f) for f friends (f <= the follow cap).
  Result<Page> Following(UserId a, const PageRequest& request) const;
  Result<Page> Fans(UserId a, const PageRequest& request) const;
  Result<Page> Friends(UserId a, const PageRequest& request) const;

  Result<Counts> GetCounts(UserId a) const;  // O(1)
  // Users `viewer` follows who follow `target`, newest first by the viewer's follow time;
  // `total` counts all of them. limit 0..kMaxPageLimit (0: just the total).
  Result<KnownFollowers> GetKnownFollowers(UserId viewer, UserId target, uint32_t limit) const;

  // ---- whole-graph access ---------------------------------------------------------------------
  size_t user_count() const { return ids_.size(); }  // interned users, including isolated ones
  uint64_t edge_count() const { return edge_count_; }
  // A 64-bit digest of the edge set (follower, followee, time), the blocks, the pending
  // requests and the private marks: equal graphs have equal digests whatever their history or
  // internal layout. Order-independent (a sum of per-item xxh3 hashes), O(edges); a graph
  // without blocks, requests or private users has the digest of its edges alone.
  uint64_t Digest() const;
  // Calls fn(follower, followee, ts) for every edge, grouped by follower.
  void ForEachEdge(const std::function<void(UserId, UserId, TimestampMs)>& fn) const;
  MemoryUsage Memory() const;
  // Checks every structural invariant: each edge's two copies agree on time and kMutual bit,
  // kMutual matches the reverse edge, lists are strictly ordered, counters equal a recount.
  // O(edges * log). Returns kCorruption naming the first violation.
  Status CheckInvariants() const;
  // Pre-sizes the id map and user table (bulk loads).
  void Reserve(size_t users);
  // Bulk loads that will add about `edges` edges: their list memory is faulted in on a
  // background thread meanwhile (SlabAllocator::BeginPrefault). EndPrefetchEdges stops it and
  // gives back what was not used; both are optional and safe to skip.
  void PrefaultEdges(uint64_t edges);
  void EndPrefaultEdges();

  // ---- point-in-time images (snapshots of version 3 and up; engine/graph/graph_image.h)
  // ---------------------- BeginImage fixes an image of the graph as it is now: users [0,
  // image_users()) and their lists, image_edges() edges. Until EndImage, a mutation first saves the
  // lists of each user it is about to change, unless AppendImageLists has handed them out already:
  // copy-on-write per user, so the image stays at this point in time while writes go on. A writer
  // pays at most one copy per user it touches, once per image. REQUIRES: exclusive access, for
  // both; BeginImage: no image in progress.
  void BeginImage();
  void EndImage();
  size_t image_users() const;    // users_count() when no image is in progress
  uint64_t image_edges() const;  // edge_count() when no image is in progress
  // Append the image records of users from `begin` to *out: their external ids, or their lists
  // as of BeginImage, in the version-4 form (copies of the arrays; AddImageRecords packs them).
  // With no image in progress, the graph as it is, which must not change meanwhile. AppendImageIds
  // covers [begin, end) clamped to the image. AppendImageLists stops before `end`, the image's end,
  // or the first user that would take the entries appended past `max_entries` (it always takes one
  // user), and returns where it stopped; it hands out each user's lists once. Thread-safety: may
  // run under shared access, from one thread at a time: they change only the capture's bookkeeping,
  // which mutations touch only under exclusive access.
  void AppendImageIds(size_t begin, size_t end, std::string* out) const;
  size_t AppendImageLists(size_t begin, size_t end, uint64_t max_entries, std::string* out) const;
  const GraphOptions& options() const { return options_; }
  // The unit the lists keep times in. Stored times read straight from a list (FollowingOf,
  // the image) convert to milliseconds with time().Answered.
  const TimeResolution& time() const { return time_; }

  // ---- internal ids, for the feed engine (engine/feed/feed.h)
  // ------------------------------------ Internal ids are dense, stable for the life of the Graph
  // and never reused.
  InternalId FindUser(UserId u) const { return ids_.Find(u); }  // kNoInternalId when unknown
  // REQUIRES: u != 0, and CheckRoomFor(u) was OK when u is new.
  InternalId InternUser(UserId u) { return Intern(u); }
  // kResourceExhausted when a and b (0: none) would take more new users than max_users allows;
  // every call that may add users checks it before it changes anything.
  Status CheckRoomFor(UserId a, UserId b = 0) const;
  UserId ExternalOf(InternalId i) const { return ids_.External(i); }
  void PrefetchExternal(InternalId i) const { ids_.PrefetchRecord(i); }
  // Overlaps the cache misses of a loop of writes (engine/graph/write_ahead.h).
  class WriteAhead;
  const FollowingList& FollowingOf(InternalId i) const { return users_[i].following; }
  uint32_t FanCountOf(InternalId i) const { return users_[i].fans.size(); }
  bool FollowsInternal(InternalId a, InternalId b) const {
    return users_[a].following.FindPeer(b) < users_[a].following.size();
  }
  // Starts fetching what FansBefore(a, none, ...) reads: stage 0 the user's record, stage 1
  // (once the record is cached) the newest fans of a short plain list, or the header of a
  // packed one. For pipelines over many users.
  void PrefetchFans(InternalId a, int stage) const;
  // Copies up to `limit` fans of `a`, newest first, strictly older than `before` (all when
  // empty) into out; returns the count. Walking by the last fan's key visits every fan present
  // throughout the walk exactly once.
  uint32_t FansBefore(InternalId a, const std::optional<EntryKey>& before, uint32_t limit,
                      EdgeEntry* out) const;
  // Whether a fan of `a` satisfies `pred`, reading fans newest first and stopping at the
  // first that does: O(fans read).
  bool AnyFan(InternalId a, const std::function<bool(InternalId)>& pred) const;
  EntryKey KeyOf(const EdgeEntry& e) const { return order().KeyOf(e); }

 private:
  friend class GraphBuilder;      // bulk loads fill the structures directly
  friend class GraphImageLoader;  // likewise, from a snapshot image
  struct ImageCapture;            // engine/graph/graph_image.h

  // UserRecord::access bits.
  static constexpr uint32_t kPrivateBit = 1;
  static constexpr uint32_t kHasAccessBit = 2;  // in a block or a request, either side
  using UserRecord = relgraph::UserRecord;

  // kInvalidUserId for id 0, naming the argument's role ("user", "viewer", ...).
  static Status CheckUserId(UserId u, const char* role);
  static Status CheckPageRequest(UserId a, const PageRequest& request);  // ids and limit
  // `known`, when set, holds a's and b's internal ids as looked up earlier (kNoInternalId:
  // unknown then, so looked up again; ids never go away, so a known one still holds).
  Result<FollowOutcome> FollowImpl(UserId a, UserId b, TimestampMs ts, bool engine_time,
                                   bool rate_limited, const InternalId* known = nullptr);
  // WriteAhead's last stage, for a pair whose ids are looked up (so its records are cached):
  // the list ends a follow reads and writes.
  void PrefetchLists(const InternalId ids[2]) const;
  // And once those are cached: the follower's newest directory entry in a packed following
  // list (its header says where), then the newest gaps that entry points to.
  void PrefetchNewestTimes(const InternalId ids[2]) const;
  void PrefetchNewestGaps(const InternalId ids[2]) const;
  // A replayed record's time must be a whole unit: a record logged at 1 ms met by a node at
  // 1 s (a WAL, a replica's primary) is refused with kUnsupported rather than rounded.
  Status CheckReplayedUnit(TimestampMs ts, const char* what) const;
  // The engine clock's time, never earlier than the last one handed out, as stored (time_).
  TimestampMs TakeEngineTime();
  // The block and request bits of relation(a, b). REQUIRES: a has kHasAccessBit.
  Relation AccessRelation(InternalId a, InternalId b) const;
  // `follows` (relation(a, b)'s follow bits) with its block and request bits added: users
  // without blocks or requests (nearly all) pay one predicted-false bit test.
  Relation WithAccess(InternalId a, InternalId b, Relation follows) const {
    if (__builtin_expect((users_[a].access & kHasAccessBit) != 0, 0)) {
      return follows | AccessRelation(a, b);
    }
    return follows;
  }
  bool IsPrivateInternal(InternalId a) const {
    return (users_[a].access & kPrivateBit) != 0;
  }
  // Pending requests `a` has sent (they count against its follow cap).
  uint32_t PendingSent(InternalId a) const {
    return (users_[a].access & kHasAccessBit) ? requests_.CountNaming(a) : 0;
  }
  // Whether `a` is in a block or a request, either side (what kHasAccessBit caches).
  bool InAnyPair(InternalId a) const;
  void RefreshAccessBit(InternalId a);
  // Changes to `lists` (blocks_ or requests_) that keep both users' kHasAccessBit right.
  void AddPair(PairLists& lists, InternalId owner, InternalId peer, TimestampMs ts);  // absent
  void EnsurePair(PairLists& lists, InternalId owner, InternalId peer, TimestampMs ts);
  bool RemovePair(PairLists& lists, InternalId owner, InternalId peer);  // false: none
  // relation(a, b) while a -> b exists (`mutual`: b follows a).
  Relation EdgeRelation(InternalId a, InternalId b, bool mutual) const {
    return WithAccess(a, b, mutual ? Relation::kMutual : Relation::kFollowing);
  }
  void MarkPrivate(InternalId a, bool on);  // the bit and private_users_
  // Removes the edges and requests between a and b (a block), calling on_edge for each edge.
  void SeverPair(InternalId a, InternalId b, BlockOutcome* outcome, const EdgeHook& on_edge);
  // Creates requester -> target from a pending request (which goes).
  FollowOutcome ApproveImpl(InternalId target, InternalId requester, TimestampMs ts,
                            const EdgeHook& on_edge);
  uint64_t ApproveAll(InternalId target, TimestampMs ts, const EdgeHook& on_edge);
  void ForgetAccess(InternalId a);  // RemoveUser's part
  // A follow decided elsewhere (ReplayOp::remote): dropped across a standing block, else
  // ensured, taking the place of a pending request.
  Status CrossingFollow(UserId a, UserId b, TimestampMs ts, InternalId ids[2]);
  // The unfinished operation in steps (see BeginRemoveUser).
  struct Unfinished {
    InternalId user = kNoInternalId;
    bool removal = false;  // else going public
    TimestampMs ts = 0;    // going public: the approvals' time, stored
    EdgeHook on_edge;      // going public: the caller's hook
  };
  // Settle on internal ids (kNoInternalId: none). `client`: a client's mutation, refused
  // with kUnavailable when it names a user being removed; else the removal is finished.
  Status SettleIds(InternalId a, InternalId b, bool client) {
    if (!unfinished_) [[likely]]
      return Status::OK();
    return SettleSlow(a, b, client);
  }
  Status SettleSlow(InternalId a, InternalId b, bool client);
  void FinishSteps();
  // The one-shot forms' rule: finish an unfinished operation of `a`, settle a's pair with it.
  void SettleFor(InternalId a);
  std::vector<UserId> ExternalsOf(const std::vector<InternalId>& users) const;
  Status CheckAccessInvariants() const;
  uint64_t AccessDigest() const;
  Result<Page> PairPage(UserId a, const PageRequest& request, const PairLists& lists) const;
  // Every change to a user's lists or counter calls this first (see BeginImage).
  void BeforeChange(InternalId x) {
    if (image_ != nullptr) [[unlikely]]
      SaveForImage(x);
  }
  void SaveForImage(InternalId x);
  void AppendUserImage(InternalId x, std::string* out) const;  // x's list records
  InternalId Intern(UserId user);
  // CheckRoomFor with the new users already known (0: not new).
  Status CheckRoom(UserId first_new, UserId second_new) const;
  // Creates a -> b; returns whether b -> a exists. The external ids save two lookups.
  bool Link(InternalId a, InternalId b, TimestampMs ts, UserId a_external, UserId b_external);
  // ApplyFollow / ApplyUnfollow. ids[] holds, on entry, the internal ids of a and b where
  // known (WriteAhead::Known; kNoInternalId: looked up), and on return both (kNoInternalId
  // for an unknown user of an unfollow).
  Status ReplayFollow(UserId a, UserId b, TimestampMs ts, ReplayMode mode, InternalId ids[2]);
  Status ReplayUnfollow(UserId a, UserId b, ReplayMode mode, InternalId ids[2]);
  void Unlink(InternalId a, size_t following_index);
  Relation RelationOf(InternalId a, InternalId b) const;
  // The follow bits alone (kNone .. kMutual): RelationOf without blocks and requests.
  Relation FollowRelationOf(InternalId a, InternalId b) const;
  // Starts fetching the records, then the following lists, of `ids` (kNoInternalId skipped).
  void PrefetchUsers(const InternalId* ids, size_t n) const;
  Relation ViewerRelation(InternalId viewer, InternalId other) const;
  EntryOrder order() const { return EntryOrder(ids_); }
  FanContext fan_context() { return fan_context(order()); }
  FanContext fan_context(const EntryOrder& order) {
    return FanContext{slab_, order, options_.fan_chunk_entries};
  }
  template <typename List>
  Page BuildPage(const List& list, const PageRequest& request, InternalId viewer) const;
  InternalId FindViewer(const PageRequest& request) const;  // and prefetches its list
  template <typename List>
  Result<Page> ListPage(UserId a, const PageRequest& request, List UserRecord::*list) const;
  void AnnotateViewer(Page& page, const PageRequest& request) const;
  TimestampMs FollowTimeOf(InternalId a, InternalId b) const;  // REQUIRES: a follows b

  GraphOptions options_;
  TimeResolution time_;
  Clock* clock_;
  TimestampMs last_engine_ts_ = 0;  // milliseconds
  IdMap ids_;
  ChunkedArray<UserRecord>& users_ = ids_.records();  // indexed by internal id
  SlabAllocator slab_;
  RateLimiter limiter_;
  PairLists blocks_;    // owner: the blocker
  PairLists requests_;  // owner: the private account asked; peer: who asked
  std::unordered_set<InternalId> private_users_;  // those with kPrivateBit
  uint64_t edge_count_ = 0;
  // The fan lists' heap beyond the slab (FanList::MemoryBytes summed), kept as they change so
  // that Memory() (every INFO and /metrics scrape) does not walk every user under the lock.
  size_t fan_index_bytes_ = 0;
  // Runs fn(), which changes u's fan list, and keeps fan_index_bytes_ in step.
  template <typename Fn>
  void ChangeFans(FanList& fans, Fn&& fn) {
    const size_t before = fans.MemoryBytes();
    fn();
    fan_index_bytes_ += fans.MemoryBytes();
    fan_index_bytes_ -= before;
  }
  std::unique_ptr<ImageCapture> image_;   // set between BeginImage and EndImage
  std::optional<Unfinished> unfinished_;  // an operation in steps (BeginRemoveUser)
};

}  // namespace relgraph
