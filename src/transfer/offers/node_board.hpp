// The board of offers of this node's processes: one MPI_Win_allocate_shared window over
// MPI_COMM_TYPE_SHARED, made collectively at MPI_Init. Each process owns a header, its slots and
// (in host mode) a landing area per slot; every process of the node maps all of them. Standard
// MPI-3 only, so it works on any MPI.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "transfer/offers/board.hpp"

namespace strider::transfer::offers {

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
  // The host landing area of a slot (null without one), and its size.
  std::byte* landing(int node_rank, int slot) const;
  std::int64_t landing_bytes(int node_rank) const;

  // MPI_Win_sync: orders this process's loads and stores on the board around a message.
  void sync() const;

 private:
  struct Region {
    std::byte* base = nullptr;
    int slots = 0;
    std::int64_t landing_bytes = 0;
  };
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  std::vector<int> node_rank_of_world_;
  std::vector<Region> regions_;  // by node rank
  int my_node_rank_ = -1;
};

}  // namespace strider::transfer::offers
