// Strider's node decisions, white-box (linked against its layers, not preloaded), against the
// tests' own model of the split (test_nodes.hpp; STRIDER_TEST_NODE_SIZE splits this machine
// into virtual nodes): runtime::node_communicator, the same-node collectives' test on it (a
// communicator is eligible when its node communicator is all of it), the offers board's node
// ranks and the model's peer placement. On CPU this is where the collectives' verdict is seen:
// its GPU half needs a GPU (virtual_node_test checks the whole path there).
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "offers/node_board.hpp"
#include "runtime/node_comm.hpp"
#include "test_nodes.hpp"
#include "transfer/placement.hpp"

namespace strider::testing {
namespace {

// The world ranks of `comm`'s ranks, in its order.
std::vector<int> world_ranks_of(MPI_Comm comm) {
  MPI_Group group, world;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int size = 0;
  MPI_Group_size(group, &size);
  std::vector<int> ranks(size), out(size);
  for (int r = 0; r < size; ++r) ranks[r] = r;
  MPI_Group_translate_ranks(group, size, ranks.data(), world, out.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  return out;
}

class NodeSplit : public ::testing::Test {
 protected:
  void SetUp() override {
    nodes_ = world_nodes();
    // Communicators to ask about: all ranks reversed, and each rank's parity class (which
    // spans the virtual nodes of two ranks).
    MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, &reversed_);
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &parity_);
  }
  void TearDown() override {
    MPI_Comm_free(&parity_);
    MPI_Comm_free(&reversed_);
  }

  // The world ranks of `comm` on this rank's node, in `comm`'s order, by the model.
  std::vector<int> expected_node(MPI_Comm comm) const {
    std::vector<int> out;
    for (int w : world_ranks_of(comm)) {
      if (nodes_[w] == nodes_[me]) out.push_back(w);
    }
    return out;
  }

  std::vector<long> nodes_;
  MPI_Comm reversed_ = MPI_COMM_NULL, parity_ = MPI_COMM_NULL;
  const int me = world_rank(), n = world_size();
};

TEST_F(NodeSplit, NodeCommunicatorFollowsTheSplit) {
  for (auto [comm, what] :
       {std::pair{MPI_COMM_WORLD, "MPI_COMM_WORLD"}, std::pair{reversed_, "all ranks reversed"},
        std::pair{parity_, "ranks of one parity"}}) {
    MPI_Comm node = MPI_COMM_NULL;
    ASSERT_EQ(runtime::node_communicator(comm, &node), MPI_SUCCESS) << what;
    EXPECT_EQ(world_ranks_of(node), expected_node(comm)) << what;
    // The same-node collectives' test (collective/same_node.cpp): all of `comm`.
    int node_size = 0, size = 0;
    MPI_Comm_size(node, &node_size);
    MPI_Comm_size(comm, &size);
    EXPECT_EQ(node_size == size, static_cast<int>(expected_node(comm).size()) == size)
        << what << ": same-node collectives' eligibility";
    MPI_Comm_free(&node);
  }
}

TEST_F(NodeSplit, OffersBoardHoldsOnlyThisNode) {
  offers::NodeBoard board;
  std::string why;
  ASSERT_TRUE(board.create(4, 0, why)) << why;
  for (int w = 0; w < n; ++w) {
    EXPECT_EQ(board.node_rank(w) >= 0, nodes_[w] == nodes_[me])
        << "world rank " << w << " on the board of world rank " << me;
  }
  board.destroy();
}

TEST_F(NodeSplit, PeerPlacementFollowsTheSplit) {
  transfer::learn_node_layout();  // collective over MPI_COMM_WORLD, as on a CUDA-aware MPI
  const std::vector<int> reversed = world_ranks_of(reversed_);
  for (int r = 0; r < n; ++r) {
    const auto expect = [&](int w) {
      return nodes_[w] == nodes_[me] ? model::Placement::SameNode : model::Placement::Remote;
    };
    EXPECT_EQ(transfer::peer_placement(MPI_COMM_WORLD, r), expect(r)) << "world rank " << r;
    EXPECT_EQ(transfer::peer_placement(reversed_, r), expect(reversed[r]))
        << "rank " << r << " of the reversed communicator";
  }
}

}  // namespace
}  // namespace strider::testing
