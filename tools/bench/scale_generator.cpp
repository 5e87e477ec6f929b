#include "tools/bench/scale_generator.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace relgraph::bench {
namespace {

constexpr double kZipfExponent = 0.9;
constexpr double kLogNormalSigma = 1.3;

// Streams of the generator, kept apart so that no two draws share a seed.
enum Stream : uint64_t {
  kDegree = 1,
  kFollowees = 2,
  kTime = 3,
  kShuffle = 4,
  kPair = 5,         // the reflection of each friend slot, and each pair's times
  kFriendShare = 6,  // the rounding of a follower's friend slots
  kMoment = 7,       // the popular moments, and which fans arrive in them
};

uint64_t Mix(uint64_t x) {  // the splitmix64 finalizer
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
uint64_t SeedOf(uint64_t seed, Stream stream, uint64_t key) {
  return Mix(Mix(seed * 4 + stream) + key);
}
uint64_t NextRandom(uint64_t& state) {  // splitmix64
  state += 0x9e3779b97f4a7c15ULL;
  return Mix(state);
}
double NextUniform(uint64_t& state) {  // (0, 1]
  return static_cast<double>((NextRandom(state) >> 11) + 1) * 0x1.0p-53;
}
double LogNormal(uint64_t& state, double sigma = kLogNormalSigma) {
  const double u1 = NextUniform(state), u2 = NextUniform(state);
  const double normal = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
  return std::exp(sigma * normal);
}
TimestampMs ExponentialMs(uint64_t& state, double mean_ms) {
  return static_cast<TimestampMs>(-mean_ms * std::log(NextUniform(state)));
}
TimestampMs UniformTime(uint64_t random) {
  return kGraphEpochStart + static_cast<TimestampMs>(random % static_cast<uint64_t>(kGraphSpanMs));
}

// Rejection-inversion for a Zipf distribution (Hörmann and Derflinger, 1996): H integrates
// the hat x^-s, HInverse inverts it.
double ZipfH(double x) {
  return (std::exp((1 - kZipfExponent) * std::log(x)) - 1) / (1 - kZipfExponent);
}
double ZipfHInverse(double y) {
  return std::exp(std::log1p(y * (1 - kZipfExponent)) / (1 - kZipfExponent));
}
double ZipfPoint(double x) {
  return std::exp(-kZipfExponent * std::log(x));
}

}  // namespace

ScaleGenerator::ScaleGenerator(uint64_t edges, uint64_t seed, uint32_t max_following,
                               const GraphShape& shape)
    : seed_(seed), max_following_(max_following), shape_(shape) {
  users_ = std::max<uint64_t>(10, static_cast<uint64_t>(std::llround(edges / 3.16)));
  both_ = users_ * 26 / 100;
  followers_ = users_ * 40 / 100;
  targets_ = both_ + users_ * 9 / 100;

  // The degree scale: the mean of the clamped log-normal degrees, sampled over the first
  // followers (a million at most, their actual draws), must be edges / followers.
  const uint64_t samples = std::min<uint64_t>(followers_, 1 << 20);
  std::vector<double> raw(samples);
  for (uint64_t k = 0; k < samples; ++k) {
    uint64_t state = SeedOf(seed_, kDegree, k);
    raw[k] = LogNormal(state);
  }
  const double want = static_cast<double>(edges) / static_cast<double>(followers_);
  degree_scale_ =
      want * static_cast<double>(samples) / std::accumulate(raw.begin(), raw.end(), 0.0);
  for (int pass = 0; pass < 6; ++pass) {
    double sum = 0;
    for (double r : raw) {
      sum += std::clamp<double>(std::round(r * degree_scale_), 1, max_following_);
    }
    degree_scale_ *= want / (sum / static_cast<double>(samples));
  }

  // Ranks to targets: r -> (a r + c) mod targets, a bijection when gcd(a, targets) = 1.
  rank_multiplier_ = static_cast<uint64_t>(static_cast<double>(targets_) * 0.6180339887) | 1;
  while (std::gcd(rank_multiplier_, targets_) != 1) rank_multiplier_ += 2;
  rank_offset_ = Mix(seed_) % targets_;

  const double n = static_cast<double>(targets_);
  h_integral_x1_ = ZipfH(1.5) - 1;
  h_integral_n_ = ZipfH(n + 0.5);
  zipf_s_ = 2 - ZipfHInverse(ZipfH(2.5) - ZipfPoint(2));

  // The friend share: the taken slots per follower must be reciprocity x the mean degree
  // (each taken slot is one mutual edge). Taking grows with the share: bisect it.
  if (shape_.reciprocity > 0) {
    const uint64_t pair_samples = std::min<uint64_t>(followers_, 1 << 15);
    const double target = std::clamp(shape_.reciprocity, 0.0, 1.0) * want;
    double lo = 0, hi = 1;
    for (int step = 0; step < 24; ++step) {
      const double mid = (lo + hi) / 2;
      (MeanTakenSlots(mid, pair_samples) < target ? lo : hi) = mid;
    }
    friend_share_ = hi;
  }
}

uint32_t ScaleGenerator::FriendSlotsOf(uint64_t k, double share) const {
  if (share <= 0) return 0;
  const uint32_t degree = DegreeOf(k);
  const double want = degree * share;
  uint64_t state = SeedOf(seed_, kFriendShare, k);
  const double whole = std::floor(want);
  const uint32_t slots =
      static_cast<uint32_t>(whole) + (NextUniform(state) <= want - whole ? 1 : 0);
  // A follower that is some target's guaranteed fan keeps a place for it.
  return std::min(slots, degree - (k < targets_ ? 1 : 0));
}

uint64_t ScaleGenerator::PartnerOf(uint64_t k, uint32_t j) const {
  const uint64_t c = SeedOf(seed_, kPair, j) % followers_;
  return (c + followers_ - k) % followers_;  // a reflection: PartnerOf(PartnerOf(k, j), j) == k
}

double ScaleGenerator::MeanTakenSlots(double share, uint64_t samples) const {
  uint64_t taken = 0;
  for (uint64_t k = 0; k < samples; ++k) {
    const uint64_t follower = Mix(k + seed_) % followers_;
    const uint32_t slots = FriendSlotsOf(follower, share);
    for (uint32_t j = 0; j < slots; ++j) {
      const uint64_t p = PartnerOf(follower, j);
      if (p != follower && j < FriendSlotsOf(p, share)) ++taken;
    }
  }
  return static_cast<double>(taken) / static_cast<double>(samples);
}

UserId ScaleGenerator::IdOf(uint64_t i) {
  const uint64_t x = Mix(i + 0x9e3779b97f4a7c15ULL);  // a bijection on 64-bit values
  return x == 0 ? 0x8000000000000000ULL : x;
}

uint32_t ScaleGenerator::DegreeOf(uint64_t k) const {
  uint64_t state = SeedOf(seed_, kDegree, k);
  return static_cast<uint32_t>(
      std::clamp<double>(std::round(LogNormal(state) * degree_scale_), 1, max_following_));
}

uint64_t ScaleGenerator::RankToTarget(uint64_t r) const {
  __extension__ using Wide = unsigned __int128;  // a r may pass 2^64 at huge sizes
  return static_cast<uint64_t>((static_cast<Wide>(r) * rank_multiplier_ + rank_offset_) % targets_);
}

uint64_t ScaleGenerator::TargetIndexToUser(uint64_t t) const {
  return t < both_ ? t : followers_ + (t - both_);  // both roles first, then fans only
}

UserId ScaleGenerator::TargetOfRank(uint64_t r) const {
  return IdOf(TargetIndexToUser(RankToTarget(r)));
}

uint64_t ScaleGenerator::ZipfRank(uint64_t& state) const {
  const double n = static_cast<double>(targets_);
  for (;;) {
    const double u = h_integral_n_ + NextUniform(state) * (h_integral_x1_ - h_integral_n_);
    const double x = ZipfHInverse(u);
    const double k = std::clamp(std::floor(x + 0.5), 1.0, n);
    if (k - x <= zipf_s_ || u >= ZipfH(k + 0.5) - ZipfPoint(k)) {
      return static_cast<uint64_t>(k) - 1;
    }
  }
}

void ScaleGenerator::FolloweesOf(uint64_t k, std::vector<UserId>* out,
                                 std::vector<TimestampMs>* times) const {
  out->clear();
  if (times != nullptr) times->clear();
  const uint32_t degree = DegreeOf(k);
  std::vector<uint64_t> picked;  // user indexes, in draw order
  picked.reserve(degree);
  // Friends first: the slots both sides take (the same pair may come twice: once is kept).
  std::vector<uint32_t> pair_slot;  // the slot of each friend picked
  const uint32_t slots = FriendSlotsOf(k, friend_share_);
  for (uint32_t j = 0; j < slots; ++j) {
    const uint64_t p = PartnerOf(k, j);
    if (p == k || j >= FriendSlotsOf(p, friend_share_)) continue;
    if (std::find(picked.begin(), picked.end(), p) != picked.end()) continue;
    picked.push_back(p);
    pair_slot.push_back(j);
  }
  const size_t friends = picked.size();
  // One guaranteed fan for every target: follower k takes target k + 1 (targets <= followers).
  std::vector<uint64_t> rank;  // the Zipf rank of each pick after the friends (none: max)
  if (k < targets_) {
    const uint64_t t = TargetIndexToUser((k + 1) % targets_);
    if (std::find(picked.begin(), picked.end(), t) == picked.end()) {
      picked.push_back(t);
      rank.push_back(UINT64_MAX);
    }
  }
  uint64_t state = SeedOf(seed_, kFollowees, k);
  for (uint32_t tries = 0; picked.size() < degree && tries < 8 * degree + 64; ++tries) {
    const uint64_t r = ZipfRank(state);
    const uint64_t u = TargetIndexToUser(RankToTarget(r));
    if (u != k && std::find(picked.begin(), picked.end(), u) == picked.end()) {
      picked.push_back(u);
      rank.push_back(r);
    }
  }
  for (uint64_t u : picked) out->push_back(IdOf(u));
  if (times == nullptr) return;
  if (!shape_.bursty_times) {
    for (size_t i = 0; i < picked.size(); ++i) {
      times->push_back(UniformTime(SeedOf(seed_, kTime, k * 1024 + i)));
    }
    return;
  }
  // A pair's first follow at a time of its own, the follow back hours later; which side
  // follows first is the pair's too.
  for (size_t i = 0; i < friends; ++i) {
    const uint64_t lo = std::min(k, picked[i]), hi = std::max(k, picked[i]);
    uint64_t pair_state = SeedOf(seed_, kPair, Mix(lo * 0x9e3779b97f4a7c15ULL + hi) + pair_slot[i]);
    const TimestampMs first = UniformTime(NextRandom(pair_state));
    const bool lo_first = (NextRandom(pair_state) & 1) != 0;
    const TimestampMs back = LaterWithin(
        first, 1000 + ExponentialMs(pair_state, kFollowBackMeanDelayMs), NextRandom(pair_state));
    times->push_back((k == lo) == lo_first ? first : back);
  }
  // The rest in sessions from the join time; fans of the most followed in their moments.
  uint64_t time_state = SeedOf(seed_, kTime, k);
  const TimestampMs joined = JoinTime(NextUniform(time_state));
  const double session_gap_median_ms = kSessionGapMedianDays * 24 * 3600 * 1000;
  TimestampMs t = joined;
  for (size_t i = friends; i < picked.size(); ++i) {
    if (i > friends) {
      const TimestampMs gap =
          NextUniform(time_state) < kNewSessionShare
              ? static_cast<TimestampMs>(session_gap_median_ms *
                                         LogNormal(time_state, kSessionGapSigma))
              : 300 + ExponentialMs(time_state, kInSessionMeanGapMs);
      t = LaterWithin(t, gap, NextRandom(time_state));
    }
    TimestampMs at = t;
    const uint64_t r = rank[i - friends];
    if (r < kMomentAccounts && NextUniform(time_state) < kFansInMoments) {
      const int which = static_cast<int>(NextRandom(time_state) % kMomentsEach);
      const TimestampMs moment = UniformTime(SeedOf(seed_, kMoment, r * kMomentsEach + which));
      if (moment >= joined) {
        at = LaterWithin(moment, ExponentialMs(time_state, kMomentMeanDelayMs),
                         NextRandom(time_state));
      }
    }
    times->push_back(at);
  }
}

bool ScaleGenerator::Next(std::vector<BenchEdge>* out) {
  out->clear();
  if (next_follower_ >= followers_) return false;
  const uint64_t end = std::min(followers_, next_follower_ + kWindowFollowers);
  std::vector<UserId> followees;
  std::vector<TimestampMs> times;
  for (uint64_t k = next_follower_; k < end; ++k) {
    FolloweesOf(k, &followees, &times);
    const UserId a = IdOf(k);
    for (size_t i = 0; i < followees.size(); ++i) out->push_back({a, followees[i], times[i]});
  }
  uint64_t state = SeedOf(seed_, kShuffle, next_follower_);
  for (size_t i = out->size(); i > 1; --i) {
    std::swap((*out)[i - 1], (*out)[NextRandom(state) % i]);
  }
  next_follower_ = end;
  return true;
}

}  // namespace relgraph::bench
