#include "tools/bench/feed_workloads.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <utility>

namespace relgraph::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

double Micros(SteadyClock::time_point a, SteadyClock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

// Times 10,000 publishes by `author` on `feed`, at 1 ms steps of post time from `ts`, taking
// post ids from `id`: "p50 X us p99 Y us".
std::string TimedPublishes(Feed& feed, Graph& graph, UserId author, PostId& id, TimestampMs& ts) {
  std::vector<double> samples;
  for (int i = 0; i < 10000; ++i) {
    const auto t0 = SteadyClock::now();
    feed.Publish(graph, author, id++, 0, ts += 1).status().IgnoreError();
    samples.push_back(Micros(t0, SteadyClock::now()));
  }
  std::ostringstream out;
  out << "p50 " << Percentile(samples, 0.5) << " us p99 " << Percentile(samples, 0.99) << " us";
  return out.str();
}

constexpr UserId kHeavyReader = ~uint64_t{0} - 1;  // ids the generator never draws
constexpr UserId kMillionFanAuthor = ~uint64_t{0} - 2;
constexpr uint32_t kMillionFans = 1'000'000;

}  // namespace

FeedWorkloads::FeedWorkloads(Graph& graph, FeedFlags flags, uint64_t seed)
    : graph_(graph), flags_(flags), rng_(seed ^ 0xfeed) {}

FeedWorkloads::~FeedWorkloads() = default;

const std::vector<std::string>& FeedWorkloads::Names() {
  static const std::vector<std::string> names = {"publish", "fanout", "timeline_first_page",
                                                 "timeline_deep_page", "timeline_heavy_reader"};
  return names;
}

UserId FeedWorkloads::RandomAuthor() {
  return authors_[rng_() % authors_.size()];
}

void FeedWorkloads::Setup() {
  if (setup_) return;
  setup_ = true;
  // Celebrities: the default threshold, unless the graph has fewer than 50 authors past it;
  // then the 50th largest fan count, so the heavy reader follows 50 of them.
  std::vector<std::pair<uint32_t, UserId>> by_fans;
  for (size_t i = 0; i < graph_.user_count(); ++i) {
    const InternalId u = static_cast<InternalId>(i);
    const uint32_t fans = graph_.FanCountOf(u);
    if (fans > 0) {
      authors_.push_back(graph_.ExternalOf(u));
      by_fans.push_back({fans, graph_.ExternalOf(u)});
    }
  }
  std::sort(by_fans.rbegin(), by_fans.rend());
  FeedOptions options;
  if (by_fans.size() >= 51 && by_fans[49].first <= options.celebrity_fans) {
    options.celebrity_fans = by_fans[50].first;
  }
  feed_ = std::make_unique<Feed>(options, nullptr);
  feed_->RecomputeCelebrities(graph_);

  // The heavy reader: 50 celebrities and 950 ordinary accounts.
  TimestampMs ts = 1'700'000'000'000;
  for (size_t i = 0; i < 50 && i < by_fans.size(); ++i) {
    graph_.FollowAt(kHeavyReader, by_fans[i].second, ++ts).status().IgnoreError();
  }
  for (int added = 0; graph_.GetCounts(kHeavyReader)->following < 1000 && added < 100000; ++added) {
    graph_.FollowAt(kHeavyReader, RandomAuthor(), ++ts).status().IgnoreError();
  }
  feed_->RecomputeCelebrities(graph_);

  // Active readers read once, building their (empty) inboxes.
  FeedPageRequest first;
  for (uint64_t i = 0; i < flags_.readers; ++i) {
    const UserId u = graph_.ExternalOf(static_cast<InternalId>(rng_() % graph_.user_count()));
    readers_.push_back(u);
    feed_->Timeline(graph_, u, first).status().IgnoreError();
  }
  feed_->Timeline(graph_, kHeavyReader, first).status().IgnoreError();
  // Every account the heavy reader follows has posted, celebrities the most.
  const FollowingList& following = graph_.FollowingOf(graph_.FindUser(kHeavyReader));
  for (size_t i = 0; i < following.size(); ++i) {
    const UserId a = graph_.ExternalOf(following.PeerAt(i));
    const int n = i < 50 ? 300 : 20;
    for (int k = 0; k < n; ++k) {
      feed_->Publish(graph_, a, next_post_++, k % 4, post_ts_ += 1).status().IgnoreError();
    }
  }
  while (feed_->fanout_pending()) feed_->RunFanout(graph_);
  after_setup_ = feed_->Stats();
}

WorkloadResult FeedWorkloads::Publish() {
  Setup();
  std::vector<UserId> authors(flags_.posts);
  for (UserId& a : authors) a = RandomAuthor();
  std::vector<double> samples;
  samples.reserve(flags_.posts / 16 + 1);
  const auto start = SteadyClock::now();
  for (uint64_t i = 0; i < flags_.posts; ++i) {
    if (i % 16 == 0) {
      const auto t0 = SteadyClock::now();
      feed_->Publish(graph_, authors[i], next_post_++, 0, post_ts_ += 1).status().IgnoreError();
      samples.push_back(Micros(t0, SteadyClock::now()));
    } else {
      feed_->Publish(graph_, authors[i], next_post_++, 0, post_ts_ += 1).status().IgnoreError();
    }
  }
  const double seconds = Micros(start, SteadyClock::now()) / 1e6;
  // The author with the most fans, timed alone: a celebrity's publish costs the same.
  const UserId celebrity =
      graph_.ExternalOf(graph_.FollowingOf(graph_.FindUser(kHeavyReader)).PeerAt(0));
  std::ostringstream note;
  note << "top-fan author (" << graph_.FanCountOf(graph_.FindUser(celebrity)) << " fans) "
       << TimedPublishes(*feed_, graph_, celebrity, next_post_, post_ts_) << "; queue "
       << feed_->Stats().fanout_queue << " tasks; " << MillionFanNote();
  return Summarize("publish", flags_.posts, seconds, std::move(samples), note.str());
}

// The generated graph has no author with a million fans, so this measurement makes one, on
// a graph and feeds of its own: the workloads' graph and feed are never touched, and run
// after it as they would without it. A million users follow the author; each feed first
// takes as many posts from those users as the publish workload made, and its fan-out runs
// (which also finishes the post index's growth, as a running system's background fan-out
// does). With the workload's threshold the author is a celebrity (its posts are pulled);
// with one above its fans it is pushed, and each publish queues a fan-out task.
std::string FeedWorkloads::MillionFanNote() const {
  GraphOptions graph_options;
  graph_options.rate_limit.enabled = false;
  Graph graph(graph_options);
  TimestampMs ts = 1'700'000'000'000;
  for (UserId fan = 1; fan <= kMillionFans; ++fan)
    graph.FollowAt(fan, kMillionFanAuthor, ++ts).status().IgnoreError();
  const uint32_t fans = graph.FanCountOf(graph.FindUser(kMillionFanAuthor));
  std::ostringstream note;
  note << "author with " << fans << " fans";
  for (bool pushed : {false, true}) {
    FeedOptions options = feed_->options();
    if (pushed) options.celebrity_fans = fans + 1;
    Feed feed(options, nullptr);
    feed.RecomputeCelebrities(graph);
    PostId id = 1;
    TimestampMs post_ts = post_ts_;
    std::mt19937_64 rng(flags_.posts);
    for (uint64_t i = 0; i < flags_.posts; ++i) {
      const UserId author = 1 + rng() % kMillionFans;
      feed.Publish(graph, author, id++, 0, post_ts += 1).status().IgnoreError();
    }
    while (feed.fanout_pending()) feed.RunFanout(graph);
    note << (pushed ? ", pushed " : ", pulled ")
         << TimedPublishes(feed, graph, kMillionFanAuthor, id, post_ts);
  }
  return note.str();
}

WorkloadResult FeedWorkloads::Fanout() {
  Setup();
  if (!feed_->fanout_pending()) Publish();
  const uint64_t before = feed_->Stats().fanout_inserts;
  feed_->TakeFanoutDelays();
  const auto start = SteadyClock::now();
  while (feed_->fanout_pending()) feed_->RunFanout(graph_);
  const double seconds = Micros(start, SteadyClock::now()) / 1e6;
  const uint64_t inserts = feed_->Stats().fanout_inserts - before;
  feed_->TakeFanoutDelays();

  // Fan-out delay under a paced stream: one post every 50 us (20k posts/s), fan-out running
  // in the gaps, as the background thread would.
  const auto paced_start = SteadyClock::now();
  auto next = paced_start;
  while (SteadyClock::now() - paced_start < std::chrono::seconds(2)) {
    feed_->Publish(graph_, RandomAuthor(), next_post_++, 0, post_ts_ += 1).status().IgnoreError();
    next += std::chrono::microseconds(50);
    while (SteadyClock::now() < next && feed_->fanout_pending()) feed_->RunFanout(graph_);
    while (SteadyClock::now() < next) {
    }
  }
  while (feed_->fanout_pending()) feed_->RunFanout(graph_);
  std::vector<double> delays_ms = feed_->TakeFanoutDelays();
  std::ostringstream note;
  note << "fan-out delay at 20k posts/s: p50 " << Percentile(delays_ms, 0.5) << " ms, p99 "
       << Percentile(delays_ms, 0.99) << " ms; " << MemoryNote();
  return Summarize("fanout", inserts, seconds, {}, note.str());  // a rate; no per-op latency
}

std::string FeedWorkloads::MemoryNote() const {
  const FeedStats s = feed_->Stats();
  const FeedStats& base = after_setup_;
  const InboxMemory m = feed_->InboxMemoryBreakdown();
  auto per = [](double bytes, double n) { return bytes / std::max(1.0, n); };
  std::ostringstream note;
  note.precision(3);
  // Each figure per what it grows with: posts and inbox entries, authors' and readers'
  // records, users' slots. "All in" divides everything by the items alone, so it depends
  // on how many posts an author and entries an inbox hold.
  note << s.posts << " posts at " << per(s.post_bytes, s.posts) << " B/post (index "
       << per(s.post_index_bytes, s.posts) << "; " << per(s.post_bytes + s.feed_user_bytes, s.posts)
       << " all in, with the feed's user records); " << s.inbox_entries << " inbox entries at "
       << per(static_cast<double>(m.entry_bytes), s.inbox_entries) << " B/entry in their blocks, "
       << per(static_cast<double>(s.inbox_bytes), s.inbox_entries) << " all in (" << s.inboxes
       << " inboxes, " << m.headers
       << " with a header: " << per(static_cast<double>(m.header_bytes), m.headers)
       << " B of header and " << per(static_cast<double>(m.side_bytes), m.headers)
       << " B of side list per header; "
       << per(static_cast<double>(m.slot_bytes), graph_.user_count())
       << " B of slot per user); each entry added since setup cost "
       << per(static_cast<double>(s.inbox_bytes) - base.inbox_bytes,
              static_cast<double>(s.inbox_entries) - base.inbox_entries)
       << " B all in";
  return note.str();
}

WorkloadResult FeedWorkloads::FirstPage() {
  Setup();
  FeedPageRequest req;
  std::vector<double> samples;
  std::vector<UserId> who(flags_.ops);
  for (UserId& u : who) u = readers_[rng_() % readers_.size()];
  const auto start = SteadyClock::now();
  for (uint64_t i = 0; i < flags_.ops; ++i) {
    const auto t0 = SteadyClock::now();
    feed_->Timeline(graph_, who[i], req).status().IgnoreError();
    if (i % 16 == 0) samples.push_back(Micros(t0, SteadyClock::now()));
  }
  return Summarize("timeline_first_page", flags_.ops, Micros(start, SteadyClock::now()) / 1e6,
                   std::move(samples));
}

WorkloadResult FeedWorkloads::DeepPage() {
  Setup();
  // Cursors 200 entries deep, found before the clock starts.
  std::vector<std::pair<UserId, PostKey>> deep;
  FeedPageRequest walk;
  walk.limit = 100;
  for (size_t i = 0; i < readers_.size() && deep.size() < 20000; ++i) {
    walk.after.reset();
    std::optional<PostKey> cursor;
    for (int page = 0; page < 2; ++page) {
      auto p = feed_->Timeline(graph_, readers_[i], walk);
      if (!p.ok() || !p->next) {
        cursor.reset();
        break;
      }
      cursor = walk.after = p->next;
    }
    if (cursor) deep.push_back({readers_[i], *cursor});
  }
  if (deep.empty()) return Summarize("timeline_deep_page", 0, 0, {}, "no reader has 200+ entries");
  std::vector<double> samples;
  FeedPageRequest req;
  const auto start = SteadyClock::now();
  for (uint64_t i = 0; i < flags_.ops; ++i) {
    const auto& [u, cursor] = deep[i % deep.size()];
    req.after = cursor;
    const auto t0 = SteadyClock::now();
    feed_->Timeline(graph_, u, req).status().IgnoreError();
    if (i % 16 == 0) samples.push_back(Micros(t0, SteadyClock::now()));
  }
  return Summarize("timeline_deep_page", flags_.ops, Micros(start, SteadyClock::now()) / 1e6,
                   std::move(samples), std::to_string(deep.size()) + " readers with 200+ entries");
}

WorkloadResult FeedWorkloads::HeavyReader() {
  Setup();
  FeedPageRequest req;
  std::vector<double> samples;
  const auto start = SteadyClock::now();
  for (uint64_t i = 0; i < flags_.ops; ++i) {
    const auto t0 = SteadyClock::now();
    feed_->Timeline(graph_, kHeavyReader, req).status().IgnoreError();
    samples.push_back(Micros(t0, SteadyClock::now()));
  }
  const double seconds = Micros(start, SteadyClock::now()) / 1e6;
  const InternalId h = graph_.FindUser(kHeavyReader);
  return Summarize("timeline_heavy_reader", flags_.ops, seconds, std::move(samples),
                   "follows " + std::to_string(graph_.FollowingOf(h).size()) +
                       " accounts; celebrity threshold " +
                       std::to_string(feed_->options().celebrity_fans) + " fans");
}

WorkloadResult FeedWorkloads::Run(const std::string& name) {
  if (name == "publish") return Publish();
  if (name == "fanout") return Fanout();
  if (name == "timeline_first_page") return FirstPage();
  if (name == "timeline_deep_page") return DeepPage();
  return HeavyReader();
}

}  // namespace relgraph::bench
