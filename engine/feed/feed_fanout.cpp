// The background fan-out: pushing (or retracting) each queued post to its author's fans'
// inboxes in bounded batches, then, with what is left of a batch's budget, moving the post
// index into a larger table and rings and inboxes into fresh pools.
#include <algorithm>

#include "engine/feed/feed_internal.h"

namespace relgraph {

void Feed::EnqueueFanout(InternalId author, const PostEntry& e, bool retract,
                         const PostEntry& evicted) {
  tasks_.push_back(Task{author, posts_.RingSlot(author), e, retract, evicted, std::nullopt,
                        std::chrono::steady_clock::now()});
}

// Gathers the fans of the first queued tasks into one batch, then pushes the whole batch in
// one pass: most authors have a handful of fans, so prefetching across task boundaries is what
// keeps several fans' cache misses in flight at once.
size_t Feed::RunFanout(const Graph& g) {
  constexpr uint32_t kBatch = 256;
  constexpr size_t kTaskAhead = 8;
  EdgeEntry fans[kBatch];
  FanRun runs[kBatch];
  size_t visited = 0;
  size_t budget = options_.fanout_batch;
  const uint32_t now_tick = inboxes_.ActivityTick(Now());
  while (budget > 0 && !tasks_.empty()) {
    uint32_t gathered = 0, n_runs = 0;
    size_t finished = 0;  // tasks at the front of the queue whose fans are all gathered
    for (size_t i = 0; i < tasks_.size() && gathered < kBatch && gathered < budget; ++i) {
      // A task's own chain: the author's record, then its newest fans.
      if (i + kTaskAhead < tasks_.size()) g.PrefetchFans(tasks_[i + kTaskAhead].author, 0);
      if (i + kTaskAhead / 2 < tasks_.size()) g.PrefetchFans(tasks_[i + kTaskAhead / 2].author, 1);
      Task& t = tasks_[i];
      // A promoted author's fans lost their inboxes: nothing to push or remove. A post
      // removed since it was published is pushed all the same: the task that removes it from
      // inboxes (its retraction, or the publish that trimmed it) comes later in the queue, and
      // until then reads skip it (its ring lookup fails). That spares a lookup per task.
      if (t.cancelled || (!t.retract && audience_.IsCelebrity(t.author))) {
        ++finished;
        continue;
      }
      const uint32_t want = static_cast<uint32_t>(std::min<size_t>(budget, kBatch) - gathered);
      const uint32_t n = g.FansBefore(t.author, t.cursor, want, fans + gathered);
      if (n > 0) runs[n_runs++] = FanRun{&t, gathered, gathered + n};
      gathered += n;
      if (n < want) {
        ++finished;
      } else {
        t.cursor = g.KeyOf(fans[gathered - 1]);
        break;  // the batch is full; this task goes on in the next one
      }
    }
    PushToFans(fans, runs, n_runs, now_tick);
    visited += gathered;
    budget -= std::min<size_t>(budget, gathered);
    const auto end = std::chrono::steady_clock::now();
    for (size_t i = 0; i < finished; ++i) {
      const Task& t = tasks_.front();
      if (t.retract) posts_.EraseLeaving(t.post.id);
      if (t.evicted.id != 0) posts_.EraseLeaving(t.evicted.id);
      fanout_delays_.push_back(std::chrono::duration<double, std::milli>(end - t.enqueued).count());
      tasks_.pop_front();
    }
    if (gathered == 0 && finished == 0) break;  // cannot happen; guards the loop
  }
  if (posts_.index_growing() && budget > 0) {
    const size_t moved = posts_.GrowIndexStep(budget);
    visited += moved;
    budget -= std::min(budget, moved);
  }
  // Pools are compacted only while no fan-out waits: a move is never in a post's way.
  if (tasks_.empty() && budget > 0) {
    if (posts_.RingsFragmented()) posts_.BeginRingMove();
    if (inboxes_.Fragmented()) inboxes_.BeginMove();
    visited += CompactStep(budget);
  }
  inboxes_.EnforceBudget(kNoInternalId);
  return visited;
}

// Rings and inboxes share the budget, so that both moves advance together. A move copies up
// to a kilobyte and touches two run headers and two blocks, a few cache misses: it counts
// as kMoveCost fans, and a call makes at most kMaxMoves, so that a post published while a
// move runs does not wait behind thousands of them for its fan-out. Returns the budget used.
size_t Feed::CompactStep(size_t budget) {
  constexpr size_t kMoveCost = 4, kMaxMoves = 128;
  const size_t moves = std::clamp<size_t>(budget / kMoveCost, 1, kMaxMoves);
  size_t moved = posts_.MoveRings(inboxes_.moving() ? (moves + 1) / 2 : moves);
  moved += inboxes_.MoveSome(moves - moved);
  return moved * kMoveCost;
}

// Each fan costs a chain of dependent loads: its inbox slot, the inbox header, the
// entries' newest end. Prefetching each link a different distance ahead overlaps the chains
// of several fans, so the loop waits for about one miss per fan instead of three.
void Feed::PushToFans(const EdgeEntry* fans, const FanRun* runs, uint32_t n_runs,
                      uint32_t now_tick) {
  constexpr uint32_t kSlotAhead = 32, kHeaderAhead = 20, kEntriesAhead = 10;
  if (n_runs == 0) return;
  const uint32_t n = runs[n_runs - 1].end;
  for (uint32_t r = 0; r < n_runs; ++r) {
    const Task& t = *runs[r].task;
    const IdSet* hides = audience_.ListOf(t.author, /*mute=*/false);
    const uint32_t ring = t.ring;
    for (uint32_t i = runs[r].begin; i < runs[r].end; ++i) {
      if (i + kSlotAhead < n) inboxes_.PrefetchSlot(fans[i + kSlotAhead].peer);
      if (i + kHeaderAhead < n) inboxes_.PrefetchHeader(fans[i + kHeaderAhead].peer);
      if (i + kEntriesAhead < n) inboxes_.PrefetchNewest(fans[i + kEntriesAhead].peer);
      const InternalId f = fans[i].peer;
      const uint32_t word = inboxes_.SlotOf(f);
      if (word == kNoSlot) continue;
      const bool mark = !Inboxes::IsPoolSlot(word);
      const uint32_t last_read = mark ? Inboxes::MarkTick(word) : inboxes_.HeaderAt(word).last_read;
      if (inboxes_.Inactive(last_read, now_tick)) {
        inboxes_.Drop(f);  // inactive: rebuilt by pull if it ever reads again
        continue;
      }
      const bool insert = !t.retract && !audience_.Muted(f, t.author) &&
                          (hides == nullptr || !SortedContains(*hides, f));
      if (mark && !insert) continue;  // an empty inbox has nothing to remove
      Inbox& in =
          mark ? inboxes_.MaterializeMark(f, audience_.EpochTag()) : inboxes_.HeaderAt(word);
      if (t.retract) {
        inboxes_.Erase(in, f, ring, t.post);
        continue;
      }
      if (insert) inboxes_.Insert(in, f, ring, t.post);
      if (t.evicted.id != 0) inboxes_.Erase(in, f, ring, t.evicted);
    }
  }
}

std::vector<double> Feed::TakeFanoutDelays() {
  std::vector<double> out;
  out.swap(fanout_delays_);
  return out;
}

}  // namespace relgraph
