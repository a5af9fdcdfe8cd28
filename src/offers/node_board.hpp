// The board of offers of this node's processes: one MPI_Win_allocate_shared window over
// MPI_COMM_TYPE_SHARED (runtime::node_communicator: virtual nodes too), made collectively at
// MPI_Init. Each process owns a header, its tallies, its slots and (in host mode) a landing area
// per slot; every process of the node maps all of them. Standard MPI-3 only, so it works on any
// MPI.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "offers/board.hpp"

namespace strider::offers {

class NodeBoard {
 public:
  // Collective over MPI_COMM_WORLD. `slots` per process, each with `landing_bytes` of host
  // landing area (0: none). False with `why` if the window cannot be had.
  bool create(int slots, std::int64_t landing_bytes, std::string& why);
  // Before MPI_Finalize.
  void destroy();
  bool ready() const { return window_ != MPI_WIN_NULL; }

  // The node-local rank of a world rank; -1 when it runs on another node.
  int node_rank(int world_rank) const;
  int my_node_rank() const { return my_node_rank_; }

  Slots slots(int node_rank) const;
  // Opens an offer in this process's own slots (Slots::open), searching from past the slot it
  // opened last (a burst's offers would otherwise each scan all those still open).
  int open_offer(const Terms& terms);
  // Takes the offer for `message` in the slots of the process at `node_rank` (Slots::take),
  // searching from past the slot last taken there: a receiver opens a burst's offers in turn,
  // and its senders mostly send in the order it received.
  std::optional<Claim> take_offer(int node_rank, const MessageId& message, std::int64_t bytes,
                                  bool& offered);
  // The host landing area of a slot (null without one), and its size.
  std::byte* landing(int node_rank, int slot) const;
  std::int64_t landing_bytes(int node_rank) const;

  // Orders this process's loads and stores on the board around a message (a full fence).
  void sync() const;

  // Tallies of the offers a receiver made, per sender and stream bucket (a hash of the stream's
  // communicator name and tag, kTallyBuckets of them): a sender that sees the tally of its
  // stream grow since its last send there knows the receiver is offering, and may wait a moment
  // for the next offer (protocol.cpp). The receiver counts one offer to `sender` (node rank);
  // a sender reads `receiver`'s tally of its own offers.
  // As many as a 3D halo of 8 quantities has streams per peer (208), so that its streams' tallies
  // rarely share a bucket: a stream whose receiver stopped offering then sees no change.
  static constexpr int kTallyBuckets = 256;
  void count_offer(int sender, std::uint64_t stream_hash) const;
  std::uint64_t offers_to_me(int receiver, std::uint64_t stream_hash) const;

 private:
  struct Region {
    std::byte* base = nullptr;
    std::uint64_t* tallies = nullptr;  // node size x kTallyBuckets
    int slots = 0;
    std::int64_t landing_bytes = 0;
  };
  std::uint64_t* tally(int owner, int sender, std::uint64_t stream_hash) const;
  int node_size_ = 0;
  int next_open_ = 0;           // where open_offer starts looking
  std::vector<int> next_take_;  // where take_offer starts looking, by node rank
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  std::vector<int> node_rank_of_world_;
  std::vector<Region> regions_;  // by node rank
  int my_node_rank_ = -1;
};

}  // namespace strider::offers
