// The per-stream state of one ledger (ledger.hpp), bounded: a run that uses a new tag every step
// makes a new stream every step, and would otherwise grow its ledgers without end. At most
// `capacity` streams are held; past it the least recently used one is forgotten. A forgotten
// stream's count is lost: restarted from 0, a sender would give a message the index of a later
// one (docs/same-node-p2p.md, I2) and a receiver would offer for messages long gone. So a stream
// that may have been forgotten comes back `forgotten` and its ledger never trusts it again. Which
// streams were forgotten is kept per peer as the range of their tags (bounded by the peers): a
// stream outside it, such as the next tag of a run that counts its tags up or down, is certainly
// new and is trusted.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/flat_index.hpp"

namespace strider::offers {

// Streams held by every table of the process now, and forgotten so far (strider_stats).
struct StreamTally {
  std::uint64_t held = 0;
  std::uint64_t forgotten = 0;
};
StreamTally stream_tally();
void tally_streams(std::int64_t held, std::uint64_t forgotten);

// Streams per table: a 3D halo of 26 neighbours and 20 quantities uses 520.
inline constexpr std::size_t kStreamsPerTable = 4096;

template <class State>
class StreamTable {
 public:
  struct Entry {
    State state{};
    bool forgotten = false;  // it may have been held and forgotten: its count is unknown
  };

  explicit StreamTable(std::size_t capacity = kStreamsPerTable)
      : capacity_(std::max<std::size_t>(1, capacity)) {}
  StreamTable(const StreamTable&) = delete;
  StreamTable& operator=(const StreamTable&) = delete;
  ~StreamTable() { tally_streams(-static_cast<std::int64_t>(nodes_.size()), 0); }

  // The stream's entry if held; its recency is unchanged.
  const Entry* find(int peer, int tag) const {
    const std::uint32_t n = nodes_.find(key(peer, tag));
    return n == kNone ? nullptr : &nodes_[n].entry;
  }

  // Whether a stream not held may have been held before.
  bool may_have_forgotten(int peer, int tag) const {
    const auto it = ranges_.find(peer);
    return it != ranges_.end() && tag >= it->second.first && tag <= it->second.second;
  }

  // The stream's entry, made if it is not held, now the most recently used.
  Entry& touch(int peer, int tag) {
    const std::uint64_t k = key(peer, tag);
    if (const std::uint32_t n = nodes_.find(k); n != kNone) {
      to_front(n);
      return nodes_[n].entry;
    }
    if (nodes_.size() >= capacity_) forget_oldest();
    const std::uint32_t n = nodes_.add(k);
    nodes_[n].entry = Entry{State{}, may_have_forgotten(peer, tag)};
    link_front(n);
    tally_streams(1, 0);
    return nodes_[n].entry;
  }

  std::size_t size() const { return nodes_.size(); }

 private:
  // Streams are nodes of a flat table (runtime/flat_index.hpp), linked by number in recency
  // order (most recent first): no list or hash node per stream.
  static constexpr std::uint32_t kNone = runtime::FlatIndex::kNone;
  struct Node {
    std::uint64_t key = 0;
    Entry entry;
    std::uint32_t newer = kNone, older = kNone;
  };

  static std::uint64_t key(int peer, int tag) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(peer)) << 32) |
           static_cast<std::uint32_t>(tag);
  }
  void unlink(std::uint32_t n) {
    Node& x = nodes_[n];
    (x.newer == kNone ? newest_ : nodes_[x.newer].older) = x.older;
    (x.older == kNone ? oldest_ : nodes_[x.older].newer) = x.newer;
    x.newer = x.older = kNone;
  }
  void link_front(std::uint32_t n) {
    nodes_[n].older = newest_;
    if (newest_ != kNone) nodes_[newest_].newer = n;
    newest_ = n;
    if (oldest_ == kNone) oldest_ = n;
  }
  void to_front(std::uint32_t n) {
    if (n == newest_) return;
    unlink(n);
    link_front(n);
  }

  void forget_oldest() {
    const std::uint32_t n = oldest_;
    const std::uint64_t k = nodes_[n].key;
    const int peer = static_cast<int>(static_cast<std::uint32_t>(k >> 32));
    const int tag = static_cast<int>(static_cast<std::uint32_t>(k));
    const auto [it, made] = ranges_.try_emplace(peer, tag, tag);
    if (!made) {
      it->second.first = std::min(it->second.first, tag);
      it->second.second = std::max(it->second.second, tag);
    }
    unlink(n);
    nodes_.remove(n);
    tally_streams(-1, 1);
  }

  std::size_t capacity_;
  runtime::FlatTable<Node> nodes_;
  std::uint32_t newest_ = kNone, oldest_ = kNone;
  std::unordered_map<int, std::pair<int, int>> ranges_;  // by peer: forgotten tags, lowest, highest
};

}  // namespace strider::offers
