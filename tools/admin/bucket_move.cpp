#include "tools/admin/bucket_move.h"

#include <thread>

#include "net/cluster/cluster_client.h"

namespace relgraph::admin {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Wall-clock milliseconds since the Unix epoch: the flip's time in the map is read again by
// a later run, perhaps on another machine, so a steady clock will not do.
uint64_t WallMs() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

// Polls `ready` every 5 ms until it says true (OK), fails with anything but kUnavailable
// (a shard or NATS briefly away is waited out), or `timeout` passes (kTimeout: "... within").
Status WaitFor(std::chrono::milliseconds timeout, const std::string& what,
               const std::function<Result<bool>()>& ready) {
  const auto deadline = Clock::now() + timeout;
  Status last;
  for (;;) {
    Result<bool> r = ready();
    if (r.ok() && *r) return Status::OK();
    if (!r.ok()) {
      if (r.status().code() != Code::kUnavailable && r.status().code() != Code::kIOError) {
        return r.status();
      }
      last = r.status();
    }
    if (Clock::now() > deadline) {
      return Status(Code::kTimeout, what + " did not happen within " +
                                        std::to_string(timeout.count()) + " ms" +
                                        (last.ok() ? "" : " (last: " + last.ToString() + ")") +
                                        "; run the same command again to go on");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

bool InfoHoldsMap(const std::map<std::string, uint64_t>& fields, const std::string& prefix,
                  uint64_t generation, uint64_t version) {
  auto field = [&](const std::string& name, uint64_t absent) {
    auto it = fields.find(name);
    return it == fields.end() ? absent : it->second;
  };
  net::ShardMap held, wanted;
  held.generation = field(prefix + "_generation", 1);
  held.version = field(prefix + "_version", 0);
  wanted.generation = generation;
  wanted.version = version;
  return !wanted.NewerThan(held);
}

Result<BucketMoveReport> MoveBuckets(const BucketMoveRequest& request,
                                     const std::function<void(const std::string&)>& progress) {
  const auto start = Clock::now();
  auto link_or = net::NatsLink::Connect(request.nats_url, request.names);
  if (!link_or.ok()) return link_or.status();
  net::NatsLink& link = **link_or;
  net::ClusterClientOptions co;
  co.nats_url = request.nats_url;
  co.names = request.names;
  co.client = request.client;
  auto cc_or = net::ClusterClient::Connect(co);
  if (!cc_or.ok()) return cc_or.status();
  net::ClusterClient& cc = **cc_or;
  auto map = link.ReadMap();
  if (!map.ok()) return map.status();
  const std::string range = std::to_string(request.first) + "-" + std::to_string(request.last);

  BucketMoveReport report;
  if (map->move) {
    const net::BucketMove& mv = *map->move;
    if (mv.first != request.first || mv.last != request.last || mv.to != request.to) {
      return Status(Code::kAlreadyExists,
                    "another move is in progress: buckets " + std::to_string(mv.first) + "-" +
                        std::to_string(mv.last) + " from shard " + std::to_string(mv.from) +
                        " to shard " + std::to_string(mv.to) + ", phase " +
                        std::string(net::MovePhaseName(mv.phase)) +
                        " (run move-bucket with those buckets and --to to finish it)");
    }
    progress("resuming move " + std::to_string(mv.id) + " of buckets " + range + " in phase " +
             std::string(net::MovePhaseName(mv.phase)));
  } else {
    if (request.first > request.last || request.last >= map->buckets) {
      return Status::InvalidArgument("buckets " + range + " are outside 0-" +
                                     std::to_string(map->buckets - 1));
    }
    if (map->Find(request.to) == nullptr) {
      return Status::InvalidArgument("shard " + std::to_string(request.to) +
                                     " is not in the map (relgraph-admin cluster show)");
    }
    const uint32_t from = map->owner[request.first];
    for (uint32_t b = request.first; b <= request.last; ++b) {
      if (map->owner[b] != from) {
        return Status::InvalidArgument(
            "buckets " + range + " belong to shards " + std::to_string(from) + " and " +
            std::to_string(map->owner[b]) + ": move the buckets of one owner at a time");
      }
    }
    if (from == request.to) {
      return Status::InvalidArgument("buckets " + range + " are on shard " + std::to_string(from) +
                                     " already");
    }
    net::ShardMap next = *map;
    const uint64_t id = WallMs();
    next.move = net::BucketMove{
        request.first, request.last, from, request.to, net::MovePhase::kPrepare, id};
    auto v = link.ReplaceMap(next, map->version);
    if (!v.ok()) return v.status();
    next.version = *v;
    *map = std::move(next);
    progress("move " + std::to_string(id) + ": buckets " + range + " from shard " +
             std::to_string(from) + " to shard " + std::to_string(request.to) + ", map version " +
             std::to_string(*v) + " (prepare)");
  }
  net::BucketMove mv = *map->move;
  report.id = mv.id;
  report.from = mv.from;
  const std::string new_owner = "shard " + std::to_string(mv.to);
  const std::string old_owner = "shard " + std::to_string(mv.from);
  // Writes the next phase of the map; returns its version.
  auto advance = [&](net::MovePhase phase) -> Status {
    net::ShardMap next = *map;
    if (phase == net::MovePhase::kFlip) {
      for (uint32_t b = mv.first; b <= mv.last; ++b) next.owner[b] = mv.to;
      // The pause starts here; a run that resumes the move reads when from the map.
      next.move->flipped_ms = WallMs();
    }
    next.move->phase = phase;
    auto v = link.ReplaceMap(next, map->version);
    if (!v.ok()) return v.status();
    next.version = *v;
    *map = std::move(next);
    mv = *map->move;
    progress("map version " + std::to_string(*v) + " (" + std::string(net::MovePhaseName(phase)) +
             ")");
    return Status::OK();
  };
  auto info_of = [&](uint32_t shard) -> Result<std::map<std::string, uint64_t>> {
    auto client = cc.ShardClient(shard);
    if (!client.ok()) return client.status();
    auto info = (*client)->Info();
    if (!info.ok()) return info.status();
    std::map<std::string, uint64_t> fields;
    for (const net::InfoField& f : info->fields) fields[f.name] = f.value;
    return fields;
  };

  Clock::time_point flipped = Clock::now();
  if (mv.phase == net::MovePhase::kPrepare) {
    const auto t = Clock::now();
    RELGRAPH_RETURN_IF_ERROR(WaitFor(
        request.timeout, new_owner + " holding its inbox and " + old_owner + " seeing the move",
        [&]() -> Result<bool> {
          auto f = info_of(mv.to);
          if (!f.ok()) return f.status();
          if (!InfoHoldsMap(*f, "cluster_map", map->generation, map->version) ||
              (*f)["cluster_inbox_held"] != 1) {
            return false;
          }
          // The old owner must count the moving users' follows as leaving before any outbox
          // routes by the flip (ShardNode::PlaceOf): from then on their followees' posts no
          // longer come to it for them.
          auto old = info_of(mv.from);
          if (!old.ok()) return old.status();
          return InfoHoldsMap(*old, "cluster_map", map->generation, map->version);
        }));
    report.prepare_ms = MsSince(t);
    RELGRAPH_RETURN_IF_ERROR(advance(net::MovePhase::kFlip));
    flipped = Clock::now();
  }
  if (mv.phase == net::MovePhase::kFlip) {
    const auto t = Clock::now();
    const uint64_t flip = map->version, generation = map->generation;
    RELGRAPH_RETURN_IF_ERROR(
        WaitFor(request.timeout, "every outbox routing by the flipped map", [&]() -> Result<bool> {
          auto infos = cc.ShardInfos();
          if (!infos.ok()) return infos.status();
          for (auto& [id, f] : *infos) {
            if (!InfoHoldsMap(f, "cluster_map", generation, flip) ||
                !InfoHoldsMap(f, "cluster_outbox_map", generation, flip)) {
              return false;
            }
          }
          return true;
        }));
    // Every message routed by the old map is in the stream up to here.
    auto routed = link.StreamLastSequence();
    if (!routed.ok()) return routed.status();
    RELGRAPH_RETURN_IF_ERROR(WaitFor(
        request.timeout, old_owner + " applying every change routed to it", [&]() -> Result<bool> {
          auto c = link.ConsumerStateOf(mv.from);
          if (!c.ok())
            return c.status().code() == Code::kNotFound ? Result<bool>(false) : c.status();
          return c->ack_floor >= *routed || (c->pending == 0 && c->ack_pending == 0);
        }));
    report.drain_ms = MsSince(t);
    RELGRAPH_RETURN_IF_ERROR(advance(net::MovePhase::kCopy));
  }
  const auto copy_start = Clock::now();
  RELGRAPH_RETURN_IF_ERROR(WaitFor(request.timeout, new_owner + " bringing the state in",
                                   [&]() { return link.MoveDone(mv.id); }));
  report.copy_ms = MsSince(copy_start);
  if (mv.flipped_ms != 0) {
    const uint64_t now = WallMs();
    report.pause_ms = now > mv.flipped_ms ? static_cast<double>(now - mv.flipped_ms) : 0;
  } else {  // a map flipped by a tool that did not record when: from this run's start
    report.pause_ms = MsSince(flipped);
    report.pause_from_flip = false;
  }
  net::ShardMap done = *map;
  done.move.reset();
  auto v = link.ReplaceMap(done, map->version);
  if (!v.ok()) return v.status();
  report.map_version = *v;
  progress("map version " + std::to_string(*v) + ": buckets " + range + " are on " + new_owner);
  if (Status s = link.ForgetMove(mv.id); !s.ok()) progress("cleaning up: " + s.ToString());
  report.total_ms = MsSince(start);
  return report;
}

}  // namespace relgraph::admin
