// ShardNode's mover: this shard's part in a bucket move (docs/cluster.md, "Moving buckets
// online"): as the old owner it exports the moving users' state, as the new one it holds the
// inbox, imports that state and marks the move done.
#include "net/roles/cluster/shard_node.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "engine/durable/wal_records.h"
#include "net/roles/cluster/move_message.h"

namespace relgraph {
namespace {

int64_t MsBetween(std::chrono::steady_clock::time_point a,
                  std::chrono::steady_clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

}  // namespace

bool ShardNode::MustHoldInbox(const net::ShardMap& m) const {
  return m.move && m.move->to == options_.shard_id && state_in_move_.load() != m.move->id;
}

Status ShardNode::LearnMoveMarks(net::NatsLink& link, const net::ShardMap& m) {
  if (!m.move || m.move->to != options_.shard_id) return Status::OK();
  const uint64_t id = m.move->id;
  auto done = link.MoveDone(id);
  if (!done.ok()) return done.status();
  if (*done) {
    state_in_move_ = id;
    imported_move_ = id;
    return Status::OK();
  }
  auto in = link.MoveMarked(id, net::NatsLink::MoveMark::kStateIn);
  if (!in.ok()) return in.status();
  if (*in) state_in_move_ = id;
  return Status::OK();
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
  while (!Halted()) {
    std::shared_ptr<const net::ShardMap> m;
    {
      std::unique_lock lock(map_mu_);
      map_changed_.wait_for(lock, std::chrono::milliseconds(200),
                            [&] { return Halted() || map_->version != seen; });
      if (Halted()) break;
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
        // Once the new owner has the state (its first mark), another attempt is not needed.
        auto taken = link_->MoveMarked(m->move->id, net::NatsLink::MoveMark::kStateIn);
        step = !taken.ok() ? taken.status() : *taken ? Status::OK() : ExportMove(*m, *m->move);
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
    if (Halted()) return Status(Code::kUnavailable, "stopped");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const auto started = std::chrono::steady_clock::now();
  auto state = db_->ExportUsers([&m](UserId u) { return m.Moving(u); });
  const auto exported = std::chrono::steady_clock::now();
  if (!state.ok()) return state.status();
  // What the state shows must survive this node's failover before another shard takes it.
  RELGRAPH_RETURN_IF_ERROR(Commit(db_->last_lsn()));
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
  if (state_in_move_.load() != mv.id) {
    RELGRAPH_RETURN_IF_ERROR(BringMoveStateIn(m, mv));
    if (state_in_move_.load() != mv.id) return Status::OK();  // stopped, or the map moved on
  }
  return CatchUpMove(m, mv);
}

Status ShardNode::BringMoveStateIn(const std::shared_ptr<const net::ShardMap>& m,
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
  while (!Halted() && map()->version == m->version) {
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
    // Held by the group before the mark: a failover before it brings the state in again.
    result = Commit(db_->last_lsn());
    if (!result.ok()) break;
    // Until the mark is stored, a restart brings the same state in again: harmless, as
    // the inbox still waits and nothing about the moving users was decided here meanwhile.
    while (!(result = link_->MarkMove(mv.id, net::NatsLink::MoveMark::kStateIn)).ok() &&
           Backoff()) {
      Log("move " + std::to_string(mv.id) + ": " + result.ToString() + "; again shortly");
    }
    if (!result.ok()) break;
    state_in_move_ = mv.id;
    {
      std::lock_guard lock(map_mu_);
      inbox_hold_ = MustHoldInbox(*map_);
    }
    Log("move " + std::to_string(mv.id) + ": the state of buckets " + std::to_string(mv.first) +
        "-" + std::to_string(mv.last) + " brought in from shard " + std::to_string(mv.from) + " (" +
        std::to_string(state->value().size()) + " records in " + std::to_string(import_ms) +
        " ms)");
    break;
  }
  natsSubscription_Destroy(sub);
  return result;
}

// The state is in and the inbox released. What other shards sent this shard before (the old
// owner's last decisions about the moving users, held in the inbox since the prepare) is
// older than the state for some relations and newer for others: a moving user's follow of a
// user here, unfollowed on the old owner, is still here as that user's fan until the inbox
// applies the unfollow. So the moving users' commands wait (`moving`) until the inbox has
// applied, durably, every message on this shard's subject that the stream held once the state
// was read; then the move is marked done and this shard answers for them.
Status ShardNode::CatchUpMove(const std::shared_ptr<const net::ShardMap>& m,
                              const net::BucketMove& mv) {
  const auto started = std::chrono::steady_clock::now();
  auto target = link_->LastSequenceOf(options_.shard_id);
  if (!target.ok()) return target.status();
  while (inbox_durable_through_.load() < *target) {
    if (Halted() || map()->version != m->version) return Status::OK();
    Pause(std::chrono::milliseconds(5), /*workers=*/true);
  }
  Status result;
  while (!(result = link_->MarkMoveDone(mv.id)).ok() && Backoff()) {
    Log("move " + std::to_string(mv.id) + ": " + result.ToString() + "; again shortly");
  }
  if (!result.ok()) return Halted() ? Status::OK() : result;
  imported_move_ = mv.id;
  Log("move " + std::to_string(mv.id) + ": buckets " + std::to_string(mv.first) + "-" +
      std::to_string(mv.last) + " taken over from shard " + std::to_string(mv.from) +
      " (the inbox applied what it held through stream sequence " + std::to_string(*target) +
      " in " + std::to_string(MsBetween(started, std::chrono::steady_clock::now())) + " ms)");
  std::lock_guard lock(stats_mu_);
  ++stats_.moves_imported;
  return Status::OK();
}

}  // namespace relgraph
