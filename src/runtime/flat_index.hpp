// An open-addressing index from 64-bit keys to node numbers (linear probing, at most half full,
// erase by shifting back: no tombstones), and FlatTable, nodes in one vector found through it, so
// that a lookup reads the slot array and the one node it finds: no allocation per entry, as a
// node-based hash map makes (the request table and the offers' stream tables take hundreds of
// entries per exchange). Not thread-safe: the caller serializes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace strider::runtime {

class FlatIndex {
 public:
  static constexpr std::uint32_t kNone = UINT32_MAX;

  // The node whose key is `k`, or kNone.
  template <class KeyOf>
  std::uint32_t find(std::uint64_t k, KeyOf key_of) const {
    if (slots_.empty()) return kNone;
    for (std::size_t i = home(k);; i = next(i)) {
      const std::uint32_t n = slots_[i];
      if (n == kNone || key_of(n) == k) return n;
    }
  }

  // Indexes node `n` (its key not indexed yet); `held` nodes are indexed once it is.
  template <class KeyOf>
  void insert(std::uint32_t n, std::size_t held, KeyOf key_of) {
    if (2 * held > slots_.size()) grow(key_of);
    place(n, key_of(n));
  }

  // Removes node `n` (indexed).
  template <class KeyOf>
  void erase(std::uint32_t n, KeyOf key_of) {
    std::size_t i = home(key_of(n));
    while (slots_[i] != n) i = next(i);
    for (std::size_t j = next(i); slots_[j] != kNone; j = next(j)) {
      const std::size_t h = home(key_of(slots_[j]));
      // The entry at j may fill the hole at i unless its home lies cyclically in (i, j].
      const bool stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i] = kNone;
  }

  void clear() { slots_.clear(); }

 private:
  std::size_t home(std::uint64_t k) const {
    return static_cast<std::size_t>((k * 0x9E3779B97F4A7C15ull) >> 32) & (slots_.size() - 1);
  }
  std::size_t next(std::size_t i) const { return (i + 1) & (slots_.size() - 1); }
  void place(std::uint32_t n, std::uint64_t k) {
    std::size_t i = home(k);
    while (slots_[i] != kNone) i = next(i);
    slots_[i] = n;
  }
  template <class KeyOf>
  void grow(KeyOf key_of) {
    std::vector<std::uint32_t> old = std::exchange(slots_, {});
    slots_.assign(old.empty() ? 16 : 2 * old.size(), kNone);
    for (const std::uint32_t n : old) {
      if (n != kNone) place(n, key_of(n));
    }
  }

  std::vector<std::uint32_t> slots_;  // node numbers; a power of two in size
};

// Nodes (a type with a `std::uint64_t key`) in one vector, reused through a free list, found by
// key through a FlatIndex. Node numbers stay valid until removed; references into the table do
// not outlive the next add.
template <class Node>
class FlatTable {
 public:
  static constexpr std::uint32_t kNone = FlatIndex::kNone;

  // The node whose key is `k`, or kNone.
  std::uint32_t find(std::uint64_t k) const { return index_.find(k, key_of()); }
  // A new node with key `k` (not held yet), otherwise as a Node{} is.
  std::uint32_t add(std::uint64_t k) {
    std::uint32_t n = 0;
    if (!free_.empty()) {
      n = free_.back();
      free_.pop_back();
    } else {
      n = static_cast<std::uint32_t>(nodes_.size());
      nodes_.emplace_back();
    }
    nodes_[n].key = k;
    index_.insert(n, ++held_, key_of());
    return n;
  }
  // Removes node `n` (held); it is reset to a Node{} for its next use.
  void remove(std::uint32_t n) {
    index_.erase(n, key_of());
    nodes_[n] = Node{};
    free_.push_back(n);
    --held_;
  }
  Node& operator[](std::uint32_t n) { return nodes_[n]; }
  const Node& operator[](std::uint32_t n) const { return nodes_[n]; }
  std::size_t size() const { return held_; }

 private:
  auto key_of() const {
    return [this](std::uint32_t n) { return nodes_[n].key; };
  }

  std::vector<Node> nodes_;
  std::vector<std::uint32_t> free_;  // removed nodes, for reuse
  FlatIndex index_;
  std::size_t held_ = 0;
};

}  // namespace strider::runtime
