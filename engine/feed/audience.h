// Audience: who may see whose posts, the rules the fan-out and every read consult per pair.
//   - Mutes: a reader stops seeing an author. Hides: an author keeps its posts from a reader.
//     Each is a sorted list of internal ids per user, in a map of its own (few users have
//     any), with a bit per user so that the common "none" costs one load from a small array.
//   - Celebrities: authors whose posts are pulled at read time instead of pushed, a bit per
//     user, and an epoch that changes whenever any author's state changes, so that an inbox
//     can keep the tag of the epoch its list of celebrity followees was made in.
//
// Why a part of its own: these rules are the one thing the fan-out, the reads, the
// snapshots and the checks all ask, and they hold no post and no inbox.
//
// Thread-safety: not thread-safe; Feed serializes it (engine/feed/feed.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "engine/graph/graph.h"
#include "storage/status.h"

namespace relgraph {

class Audience {
 public:
  using IdSet = std::vector<InternalId>;  // sorted

  // first_epoch: where the epoch starts (tests start it near a wrap of its tag).
  Audience(uint32_t max_mutes, uint32_t max_hides, uint64_t first_epoch = 1)
      : max_mutes_(max_mutes), max_hides_(max_hides), epoch_(first_epoch) {}

  // ---- mutes and hides ---------------------------------------------------------------------
  bool Muted(InternalId reader, InternalId author) const {
    const IdSet* mutes = ListOf(reader, /*mute=*/true);
    return mutes != nullptr && std::binary_search(mutes->begin(), mutes->end(), author);
  }
  bool HiddenFrom(InternalId author, InternalId reader) const {
    const IdSet* hides = ListOf(author, /*mute=*/false);
    return hides != nullptr && std::binary_search(hides->begin(), hides->end(), reader);
  }
  bool Visible(InternalId reader, InternalId author) const {
    return !Muted(reader, author) && !HiddenFrom(author, reader);
  }
  // The users `u` mutes (mute) or hides its posts from; nullptr when none.
  const IdSet* ListOf(InternalId u, bool mute) const {
    if (!TestBit(mute ? muting_bits_ : hiding_bits_, u)) return nullptr;
    const auto& lists = mute ? mutes_ : hides_;
    const auto it = lists.find(u);
    return it == lists.end() ? nullptr : &it->second;
  }
  // Adds (on) or removes `other` in `owner`'s mutes (mute) or hides; true when the list
  // changed. kLimitExceeded when adding to a full list, unless !enforce_cap (replay, whose
  // outcome was decided when it was logged). `owner_id` names the owner in the message.
  Result<bool> Set(InternalId owner, InternalId other, bool on, bool mute, bool enforce_cap,
                   UserId owner_id);
  // Forgets every mute and hide `u` owns (account deletion).
  void Forget(InternalId u);
  // Calls fn(owner, list) for every non-empty mute (mute) or hide list, in no order.
  template <typename Fn>
  void ForEachList(bool mute, Fn&& fn) const {
    for (const auto& [u, set] : mute ? mutes_ : hides_) fn(u, set);
  }
  // One past the largest user id with a mute or hide bit (an upper bound, for scans).
  size_t ListUserBound() const { return std::max(muting_bits_.size(), hiding_bits_.size()) * 64; }
  size_t ListBytes() const;  // the lists and their maps, estimated

  // ---- celebrities -------------------------------------------------------------------------
  bool IsCelebrity(InternalId u) const { return TestBit(celebrity_bits_, u); }
  // Sets u's state and moves the epoch. REQUIRES: the state changes. Returns EpochWrapped().
  [[nodiscard]] bool SetCelebrity(InternalId u, bool on);
  void ClearCelebrities(size_t users);  // every user ordinary; the epoch does not move
  uint64_t celebrities() const { return celebrities_; }
  // The epoch's low 30 bits, as inboxes keep it; never 0, which marks a list as stale.
  uint32_t EpochTag() const { return static_cast<uint32_t>(epoch_ & 0x3fff'ffff); }
  // Moves the epoch. True when the tag wrapped: the caller must then mark every kept tag stale
  // (set it to 0), since an old tag could equal a new one.
  [[nodiscard]] bool BumpEpoch();

  // Bits against lists, sorted sets without their owner, the size count against a recount;
  // kCorruption naming the rule broken and the user (by its id in g).
  Status CheckInvariants(const Graph& g) const;

 private:
  static bool TestBit(const std::vector<uint64_t>& bits, InternalId u) {
    return u < bits.size() * 64 && ((bits[u / 64] >> (u % 64)) & 1) != 0;
  }
  static void SetBit(std::vector<uint64_t>& bits, InternalId u, bool on);

  const uint32_t max_mutes_, max_hides_;
  std::unordered_map<InternalId, IdSet> mutes_, hides_;
  size_t list_capacity_ = 0;           // ids the lists' vectors have room for
  std::vector<uint64_t> muting_bits_;  // users with at least one mute
  std::vector<uint64_t> hiding_bits_;  // users with at least one hide
  std::vector<uint64_t> celebrity_bits_;
  uint64_t celebrities_ = 0;
  uint64_t epoch_;
};

}  // namespace relgraph
