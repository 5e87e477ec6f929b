// InboxOrder against a model of a JetStream consumer that loses deliveries on their way,
// redelivers unacknowledged messages in any order after their ack wait, is subscribed to
// again from its ack floor, and changes leader (numbering again from an older replicated
// state). The inbox applies by InboxOrder's verdicts, reading the stream to fill what it must
// check, and an exactly-once rule like Db::ApplyRemote's (one origin, a high-water mark): no
// message may ever be skipped unapplied, and at the end every one is applied.
#include "net/roles/cluster/inbox_order.h"

#include <doctest.h>

#include <map>
#include <random>
#include <set>
#include <vector>

namespace relgraph {
namespace {

struct ConsumerModel {
  uint64_t consumer_seq = 0;
  uint64_t delivered_stream = 0;         // the last message delivered the first time
  std::map<uint64_t, uint64_t> pending;  // stream sequence -> times delivered
  std::set<uint64_t> acked;
};

struct Run {
  std::mt19937_64 rng;
  bool leader_changes;
  std::vector<uint64_t> ours;  // the subject's stream sequences, in order
  uint64_t stream_last = 0;
  ConsumerModel consumer;
  std::vector<ConsumerModel> history;  // after each delivery: what a new leader may have
  InboxOrder order;
  uint64_t high = 0;  // the inbound position
  std::set<uint64_t> applied;

  Run(uint64_t seed, bool changes) : rng(seed), leader_changes(changes) {}

  bool Chance(int percent) { return static_cast<int>(rng() % 100) < percent; }

  void Append() {
    for (int i = 1 + static_cast<int>(rng() % 3); i > 0; --i) {
      ++stream_last;
      if (Chance(50)) ours.push_back(stream_last);
    }
  }
  // The subject's first message at or after `from` (0: none).
  uint64_t NextOnSubject(uint64_t from) const {
    for (uint64_t s : ours) {
      if (s >= from) return s;
    }
    return 0;
  }
  uint64_t AckFloor() const {
    uint64_t floor = 0;
    for (uint64_t s : ours) {
      if (!consumer.acked.contains(s)) break;
      floor = s;
    }
    return floor;
  }
  void Apply(uint64_t s) {
    if (s <= high) {
      REQUIRE_MESSAGE(applied.contains(s), "message " << s << " skipped, never applied");
      return;
    }
    for (uint64_t o : ours) {
      if (o >= s) break;
      REQUIRE_MESSAGE(applied.contains(o), "message " << s << " applied before " << o);
    }
    applied.insert(s);
    high = s;
  }
  // The inbox's handling of one delivery that arrived.
  void Receive(const Delivery& d) {
    const InboxOrder::Verdict v = order.Classify(d);
    if (v == InboxOrder::Verdict::kCheck) {
      while (order.through() + 1 < d.stream_seq) {
        const uint64_t next = NextOnSubject(order.through() + 1);
        REQUIRE(next != 0);
        if (next == d.stream_seq) break;
        Apply(next);
        order.Applied(next, nullptr);
      }
    }
    Apply(d.stream_seq);
    if (v != InboxOrder::Verdict::kRepeat) order.Applied(d.stream_seq, &d);
    consumer.acked.insert(d.stream_seq);
    consumer.pending.erase(d.stream_seq);
  }
  // One delivery by the consumer; lost on its way with `loss` percent.
  void Deliver(int loss) {
    Delivery d;
    const uint64_t first = NextOnSubject(consumer.delivered_stream + 1);
    if (!consumer.pending.empty() && (first == 0 || Chance(25))) {
      auto it = consumer.pending.begin();
      std::advance(it, rng() % consumer.pending.size());  // ack waits end in any order
      d.stream_seq = it->first;
      d.delivered = ++it->second;
    } else if (first != 0) {
      consumer.delivered_stream = first;
      d.stream_seq = first;
      d.delivered = consumer.pending[first] = 1;
    } else {
      return;
    }
    d.consumer_seq = ++consumer.consumer_seq;
    history.push_back(consumer);
    if (!Chance(loss)) Receive(d);
  }
  void Step(int loss) {
    const int r = static_cast<int>(rng() % 100);
    if (r < 20) {
      Append();
    } else if (r < 96) {
      order.NewBatch();  // one fetch, answered by the consumer's leader of the moment
      for (int i = 1 + static_cast<int>(rng() % 6); i > 0; --i) Deliver(loss);
    } else if (r < 98) {
      order.Reset(AckFloor());  // subscribed again
    } else if (leader_changes && history.size() > 1) {
      // The new leader knows the state as of a few deliveries back; acks since then are
      // lost with the old one (JetStream does not promise them either).
      const size_t lag = 1 + rng() % std::min<size_t>(4, history.size() - 1);
      consumer = history[history.size() - 1 - lag];
      history.resize(history.size() - lag);
    }
  }
};

void Check(uint64_t seed, bool leader_changes) {
  Run run(seed, leader_changes);
  for (int i = 0; i < 400; ++i) run.Step(/*loss=*/15);
  // The faults end; every message comes in the end.
  for (int i = 0; i < 20000 && run.applied.size() < run.ours.size(); ++i) {
    if (i % 8 == 0) run.order.NewBatch();
    run.Deliver(0);
  }
  CHECK(run.applied.size() == run.ours.size());
}

TEST_CASE("inbox order: lost deliveries, redeliveries in any order, resubscribing: none lost") {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    CAPTURE(seed);
    Check(seed, false);
  }
}

TEST_CASE("inbox order: and a consumer's leader changes, numbering again: none lost") {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    CAPTURE(seed);
    Check(seed, true);
  }
}

TEST_CASE("inbox order: a deliveries' gap is checked, the next first delivery is not") {
  InboxOrder order;
  order.Reset(10);
  CHECK(order.Classify({5, 1, 1}) == InboxOrder::Verdict::kRepeat);
  CHECK(order.Classify({12, 2, 1}) == InboxOrder::Verdict::kCheck);  // unknown numbering
  const Delivery d1{12, 2, 1};
  order.Applied(12, &d1);
  CHECK(order.Classify({15, 3, 1}) == InboxOrder::Verdict::kNext);
  const Delivery d2{15, 3, 1};
  order.Applied(15, &d2);
  CHECK(order.Classify({20, 5, 1}) == InboxOrder::Verdict::kCheck);  // delivery 4 was lost
  const Delivery d3{20, 5, 1};
  order.Applied(20, &d3);
  CHECK(order.Classify({22, 6, 2}) == InboxOrder::Verdict::kCheck);  // a redelivery
  const Delivery d4{22, 6, 2};
  order.Applied(22, &d4);
  CHECK(order.Classify({23, 7, 1}) == InboxOrder::Verdict::kCheck);  // after a redelivery
  const Delivery d5{23, 7, 1};
  order.Applied(23, &d5);
  CHECK(order.Classify({21, 6, 1}) == InboxOrder::Verdict::kRepeat);  // numbered again
  CHECK(order.Classify({24, 8, 1}) == InboxOrder::Verdict::kCheck);   // so not proven
  const Delivery d9{24, 8, 1};
  order.Applied(24, &d9);
  order.NewBatch();
  CHECK(order.Classify({25, 9, 1}) == InboxOrder::Verdict::kCheck);  // another fetch
}

}  // namespace
}  // namespace relgraph
