#include "tools/bench/scale_generator.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace relgraph::bench {
namespace {

constexpr double kZipfExponent = 0.9;
constexpr double kLogNormalSigma = 1.3;

// Streams of the generator, kept apart so that no two draws share a seed.
enum Stream : uint64_t { kDegree = 1, kFollowees = 2, kTime = 3, kShuffle = 4 };

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
double LogNormal(uint64_t& state) {
  const double u1 = NextUniform(state), u2 = NextUniform(state);
  const double normal = std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
  return std::exp(kLogNormalSigma * normal);
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

ScaleGenerator::ScaleGenerator(uint64_t edges, uint64_t seed, uint32_t max_following)
    : seed_(seed), max_following_(max_following) {
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

void ScaleGenerator::FolloweesOf(uint64_t k, std::vector<UserId>* out) const {
  out->clear();
  const uint32_t degree = DegreeOf(k);
  std::vector<uint64_t> picked;  // user indexes, in draw order
  picked.reserve(degree);
  // One guaranteed fan for every target: follower k takes target k + 1 (targets <= followers).
  if (k < targets_) picked.push_back(TargetIndexToUser((k + 1) % targets_));
  uint64_t state = SeedOf(seed_, kFollowees, k);
  for (uint32_t tries = 0; picked.size() < degree && tries < 8 * degree + 64; ++tries) {
    const uint64_t u = TargetIndexToUser(RankToTarget(ZipfRank(state)));
    if (u != k && std::find(picked.begin(), picked.end(), u) == picked.end()) {
      picked.push_back(u);
    }
  }
  for (uint64_t u : picked) out->push_back(IdOf(u));
}

TimestampMs ScaleGenerator::TimeOf(uint64_t k, size_t i) const {
  return ScaleGenerator::kEpochStart +
         static_cast<TimestampMs>(SeedOf(seed_, kTime, k * 1024 + i) %
                                  static_cast<uint64_t>(ScaleGenerator::kSpanMs));
}

bool ScaleGenerator::Next(std::vector<BenchEdge>* out) {
  out->clear();
  if (next_follower_ >= followers_) return false;
  const uint64_t end = std::min(followers_, next_follower_ + kWindowFollowers);
  std::vector<UserId> followees;
  for (uint64_t k = next_follower_; k < end; ++k) {
    FolloweesOf(k, &followees);
    const UserId a = IdOf(k);
    for (size_t i = 0; i < followees.size(); ++i) out->push_back({a, followees[i], TimeOf(k, i)});
  }
  uint64_t state = SeedOf(seed_, kShuffle, next_follower_);
  for (size_t i = out->size(); i > 1; --i) {
    std::swap((*out)[i - 1], (*out)[NextRandom(state) % i]);
  }
  next_follower_ = end;
  return true;
}

}  // namespace relgraph::bench
