#include "engine/feed/post_index.h"

#include <algorithm>

namespace relgraph {

namespace {

constexpr double kMaxLoad = 0.93;    // grow past this share of slots in use
constexpr double kGrownLoad = 0.82;  // the load a rebuild aims at
constexpr int kMaxKicks = 500;       // cuckoo walk length before a slot goes to the stash

}  // namespace

void PostIndex::Reset(size_t buckets) {
  buckets = std::max(buckets, kMinBuckets);
  buckets_.assign(buckets, Bucket{});
  buckets_.shrink_to_fit();
  stash_.clear();
  stash_.shrink_to_fit();
  alt_offset_.resize(256);
  for (uint32_t fp = 0; fp < 256; ++fp)
    alt_offset_[fp] = static_cast<uint32_t>(Mix(fp + 0x9E3779B97F4A7C15ull) % buckets);
  size_ = 0;
  max_size_ = static_cast<size_t>(static_cast<double>(buckets * kSlotsPerBucket) * kMaxLoad);
}

size_t PostIndex::BucketsFor(size_t posts) {
  const auto want =
      static_cast<size_t>(static_cast<double>(posts) / (kGrownLoad * kSlotsPerBucket)) + 1;
  return std::max(want, kMinBuckets);
}

size_t PostIndex::GrownBuckets() const {
  return std::max(BucketsFor(size_ + 1), buckets_.size() + 1);
}

bool PostIndex::PlaceFree(uint32_t bucket, uint8_t fp, InternalId author) {
  Bucket& b = buckets_[bucket];
  for (size_t s = 0; s < kSlotsPerBucket; ++s) {
    if (b.fp[s] == kEmpty) {
      b.fp[s] = fp;
      b.author[s] = author;
      return true;
    }
  }
  return false;
}

void PostIndex::Insert(PostId post, InternalId author) {
  ++size_;
  const Place p = PlaceOf(post);
  if (PlaceFree(p.first, p.fp, author) || PlaceFree(p.second, p.fp, author)) return;
  // Both buckets are full: first look one step ahead (a slot whose other bucket has room moves
  // there), then walk, evicting a random slot each step, as cuckoo hashing does.
  for (const uint32_t i : {p.first, p.second}) {
    Bucket& b = buckets_[i];
    for (size_t s = 0; s < kSlotsPerBucket; ++s) {
      if (PlaceFree(Alt(i, b.fp[s]), b.fp[s], b.author[s])) {
        b.fp[s] = p.fp;
        b.author[s] = author;
        return;
      }
    }
  }
  uint8_t fp = p.fp;
  uint32_t bucket = p.first;
  for (int kick = 0; kick < kMaxKicks; ++kick) {
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    Bucket& b = buckets_[bucket];
    const size_t s = rng_ % kSlotsPerBucket;
    std::swap(fp, b.fp[s]);
    std::swap(author, b.author[s]);
    bucket = Alt(bucket, fp);
    if (PlaceFree(bucket, fp, author)) return;
  }
  stash_.push_back({fp, bucket, author});
}

bool PostIndex::Erase(PostId post, InternalId author) {
  const Place p = PlaceOf(post);
  for (const uint32_t i : {p.first, p.second}) {
    Bucket& b = buckets_[i];
    for (size_t s = 0; s < kSlotsPerBucket; ++s) {
      if (b.fp[s] == p.fp && b.author[s] == author) {
        b.fp[s] = kEmpty;
        --size_;
        return true;
      }
    }
  }
  for (size_t k = 0; k < stash_.size(); ++k) {
    const Stashed& s = stash_[k];
    if (s.fp == p.fp && s.author == author && (s.bucket == p.first || s.bucket == p.second)) {
      stash_.erase(stash_.begin() + static_cast<std::ptrdiff_t>(k));
      --size_;
      return true;
    }
  }
  return false;
}

}  // namespace relgraph
