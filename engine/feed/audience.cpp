#include "engine/feed/audience.h"

#include <bit>
#include <string>

namespace relgraph {

void Audience::SetBit(std::vector<uint64_t>& bits, InternalId u, bool on) {
  if (u / 64 >= bits.size()) bits.resize(u / 64 + 1, 0);
  const uint64_t bit = uint64_t{1} << (u % 64);
  if (on)
    bits[u / 64] |= bit;
  else
    bits[u / 64] &= ~bit;
}

Result<bool> Audience::Set(InternalId owner, InternalId other, bool on, bool mute, bool enforce_cap,
                           UserId owner_id) {
  const IdSet* existing = ListOf(owner, mute);
  const bool present = existing != nullptr && std::ranges::binary_search(*existing, other);
  if (present == on) return false;
  const uint32_t cap = mute ? max_mutes_ : max_hides_;
  if (on && enforce_cap && existing != nullptr && existing->size() >= cap) {
    return Status(Code::kLimitExceeded, std::string(mute ? "mute" : "hide") + " list of user " +
                                            std::to_string(owner_id) + " is full (" +
                                            std::to_string(cap) + ")");
  }
  auto& lists = mute ? mutes_ : hides_;
  IdSet& set = lists[owner];
  list_capacity_ -= set.capacity();
  const auto it = std::lower_bound(set.begin(), set.end(), other);
  if (on) {
    set.insert(it, other);
  } else {
    set.erase(it);
  }
  const bool any = !set.empty();
  if (any)
    list_capacity_ += set.capacity();
  else
    lists.erase(owner);  // an empty list has no entry: the bit alone says "none"
  SetBit(mute ? muting_bits_ : hiding_bits_, owner, any);
  return true;
}

void Audience::Forget(InternalId u) {
  for (auto* lists : {&mutes_, &hides_}) {
    const auto it = lists->find(u);
    if (it == lists->end()) continue;
    list_capacity_ -= it->second.capacity();
    lists->erase(it);
  }
  SetBit(muting_bits_, u, false);
  SetBit(hiding_bits_, u, false);
}

size_t Audience::ListBytes() const {
  // A node of a std::unordered_map: next pointer and value, plus malloc's 8-byte header.
  constexpr size_t kNode = sizeof(void*) + sizeof(std::pair<const InternalId, IdSet>) + 8;
  size_t bytes = list_capacity_ * sizeof(InternalId);
  for (const auto* lists : {&mutes_, &hides_})
    bytes += lists->size() * kNode + lists->bucket_count() * sizeof(void*);
  return bytes;
}

bool Audience::SetCelebrity(InternalId u, bool on) {
  SetBit(celebrity_bits_, u, on);
  if (on)
    ++celebrities_;
  else
    --celebrities_;
  return BumpEpoch();
}

void Audience::ClearCelebrities(size_t users) {
  celebrity_bits_.assign(users / 64 + 1, 0);
  celebrities_ = 0;
}

bool Audience::BumpEpoch() {
  ++epoch_;
  if (EpochTag() != 0) return false;
  ++epoch_;  // 0 means "stale": skip it
  return true;
}

Status Audience::CheckInvariants(const Graph& g) const {
  const auto broken = [&](const char* what, InternalId u) {
    return Status::Corruption(std::string("feed invariant: the mute or hide ") + what +
                              " of user " + std::to_string(g.ExternalOf(u)));
  };
  // Mutes and hides: non-empty sorted sets without the owner, each user's bit set exactly
  // when it has a list.
  size_t listed = 0;
  for (const auto* lists : {&mutes_, &hides_}) {
    const auto& bits = lists == &mutes_ ? muting_bits_ : hiding_bits_;
    for (const auto& [u, set] : *lists) {
      if (set.empty() || !TestBit(bits, u)) return broken("bit disagrees with the list", u);
      for (size_t k = 0; k < set.size(); ++k) {
        if ((k > 0 && set[k - 1] >= set[k]) || set[k] == u)
          return broken("list is not a sorted set without its owner", u);
      }
      listed += set.capacity();
    }
  }
  for (const auto* bits : {&muting_bits_, &hiding_bits_}) {
    size_t set_bits = 0;
    for (uint64_t word : *bits) set_bits += std::popcount(word);
    if (set_bits != (bits == &muting_bits_ ? mutes_ : hides_).size())
      return Status::Corruption(
          "feed invariant: a mute or hide bit is set for a user with no list");
  }
  if (listed != list_capacity_)
    return Status::Corruption("feed invariant: the mute and hide lists' size count is wrong");
  size_t celebrity_bits = 0;
  for (uint64_t word : celebrity_bits_) celebrity_bits += std::popcount(word);
  if (celebrity_bits != celebrities_)
    return Status::Corruption(
        "feed invariant: the celebrity count disagrees with the celebrity bits");
  return Status::OK();
}

}  // namespace relgraph
