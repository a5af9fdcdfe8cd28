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
#include <list>
#include <unordered_map>
#include <utility>

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
  ~StreamTable() { tally_streams(-static_cast<std::int64_t>(lru_.size()), 0); }

  // The stream's entry if held; its recency is unchanged.
  const Entry* find(int peer, int tag) const {
    const auto it = index_.find(key(peer, tag));
    return it == index_.end() ? nullptr : &it->second->second;
  }

  // Whether a stream not held may have been held before.
  bool may_have_forgotten(int peer, int tag) const {
    const auto it = ranges_.find(peer);
    return it != ranges_.end() && tag >= it->second.first && tag <= it->second.second;
  }

  // The stream's entry, made if it is not held, now the most recently used.
  Entry& touch(int peer, int tag) {
    const std::uint64_t k = key(peer, tag);
    if (const auto it = index_.find(k); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
    if (lru_.size() >= capacity_) forget_oldest();
    lru_.emplace_front(k, Entry{State{}, may_have_forgotten(peer, tag)});
    index_.emplace(k, lru_.begin());
    tally_streams(1, 0);
    return lru_.front().second;
  }

  std::size_t size() const { return lru_.size(); }

 private:
  static std::uint64_t key(int peer, int tag) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(peer)) << 32) |
           static_cast<std::uint32_t>(tag);
  }

  void forget_oldest() {
    const std::uint64_t k = lru_.back().first;
    const int peer = static_cast<int>(static_cast<std::uint32_t>(k >> 32));
    const int tag = static_cast<int>(static_cast<std::uint32_t>(k));
    const auto [it, made] = ranges_.try_emplace(peer, tag, tag);
    if (!made) {
      it->second.first = std::min(it->second.first, tag);
      it->second.second = std::max(it->second.second, tag);
    }
    index_.erase(k);
    lru_.pop_back();
    tally_streams(-1, 1);
  }

  std::size_t capacity_;
  std::list<std::pair<std::uint64_t, Entry>> lru_;  // most recently used first
  std::unordered_map<std::uint64_t, typename std::list<std::pair<std::uint64_t, Entry>>::iterator>
      index_;
  std::unordered_map<int, std::pair<int, int>> ranges_;  // by peer: forgotten tags, lowest, highest
};

}  // namespace strider::offers
