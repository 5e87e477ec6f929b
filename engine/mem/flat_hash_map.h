// FlatHashMap: a hash map from 64-bit keys to small values, in one array of slots.
//
// Why this design: the engine's side maps (blocks, follow requests) hold millions of tiny
// entries where a node-based std::unordered_map pays a heap node, a bucket pointer and a cache
// miss per hop. Here a slot is the key and the value side by side; linear probing keeps a
// lookup to one or two cache lines; deletion shifts the following run back (no tombstones), so
// a map that churns stays as fast as a fresh one. Capacity is a power of two, grown at 7/8
// load and never shrunk but by Clear().
//
// Keys: any value but kEmptyKey (all ones), which marks a free slot. Value: trivially
// copyable. Pointers to values stay valid until the next Insert or Erase.
// Thread-safety: none; const methods may run concurrently with each other.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

namespace relgraph {

template <typename Value>
class FlatHashMap {
  static_assert(std::is_trivially_copyable_v<Value>);

 public:
  static constexpr uint64_t kEmptyKey = ~uint64_t{0};

  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }
  size_t MemoryBytes() const { return slots_.capacity() * sizeof(Slot); }

  // nullptr when `key` is absent.
  const Value* Find(uint64_t key) const {
    if (size_ == 0) return nullptr;
    for (size_t i = Home(key);; i = Next(i)) {
      const Slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key == kEmptyKey) return nullptr;
    }
  }
  Value* Find(uint64_t key) {
    return const_cast<Value*>(static_cast<const FlatHashMap*>(this)->Find(key));
  }
  bool Contains(uint64_t key) const { return Find(key) != nullptr; }

  // Adds key -> value when key is absent. Returns the key's value and whether it was added
  // (false: the existing value, unchanged). REQUIRES: key != kEmptyKey.
  std::pair<Value*, bool> Insert(uint64_t key, const Value& value) {
    if ((size_ + 1) * 8 > slots_.size() * 7) Grow();
    size_t i = Home(key);
    for (; slots_[i].key != kEmptyKey; i = Next(i)) {
      if (slots_[i].key == key) return {&slots_[i].value, false};
    }
    slots_[i] = Slot{key, value};
    ++size_;
    return {&slots_[i].value, true};
  }

  // Removes key, copying its value to *removed when given; false when it was absent. The
  // slots after it in its run move back.
  bool Erase(uint64_t key, Value* removed = nullptr) {
    if (size_ == 0) return false;
    size_t hole = Home(key);
    for (; slots_[hole].key != key; hole = Next(hole)) {
      if (slots_[hole].key == kEmptyKey) return false;
    }
    if (removed != nullptr) *removed = slots_[hole].value;
    // Backward shift: move each later entry of the run into the hole unless its home lies
    // cyclically in (hole, entry], where it must stay reachable from.
    for (size_t i = Next(hole); slots_[i].key != kEmptyKey; i = Next(i)) {
      const size_t home = Home(slots_[i].key);
      const bool stays = hole < i ? (hole < home && home <= i) : (hole < home || home <= i);
      if (stays) continue;
      slots_[hole] = slots_[i];
      hole = i;
    }
    slots_[hole].key = kEmptyKey;
    --size_;
    return true;
  }

  void Clear() {
    std::vector<Slot>().swap(slots_);
    size_ = 0;
  }

  // fn(key, const Value&) for every entry, in slot order. The map must not change meanwhile.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const Slot& s : slots_) {
      if (s.key != kEmptyKey) fn(s.key, s.value);
    }
  }

 private:
  struct Slot {
    uint64_t key;
    Value value;
  };

  size_t Home(uint64_t key) const {
    // Fibonacci hashing: the high bits of key * 2^64/phi, as many as the capacity needs.
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
  }
  size_t Next(size_t i) const { return (i + 1) & (slots_.size() - 1); }

  void Grow() {
    const size_t capacity = slots_.empty() ? 16 : slots_.size() * 2;
    std::vector<Slot> old(capacity, Slot{kEmptyKey, Value{}});
    old.swap(slots_);
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    size_ = 0;
    for (const Slot& s : old) {
      if (s.key != kEmptyKey) Insert(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  unsigned shift_ = 64;
};

}  // namespace relgraph
