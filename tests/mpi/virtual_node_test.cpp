// Virtual nodes (STRIDER_TEST_NODE_SIZE, README): with the ranks of one machine split into
// nodes, everything Strider decides by node must follow the split. Black-box, from Strider's
// counters against the tests' own model of the split (test_nodes.hpp):
//   - a message between two ranks goes by an offer (made, taken, used) exactly when they share a
//     node, for every ordered pair of ranks;
//   - a collective goes GPU to GPU only on a communicator within one node: on all ranks, never
//     where they span two nodes; on one node's ranks, always (device memory: the GPU build in
//     tests/gpu; over host memory it never does, and only the data is checked).
// Preloaded, MPI_THREAD_SINGLE (offers are off under MPI_THREAD_MULTIPLE), host buffers through
// Strider's paths (STRIDER_P2P_HOST=pack, STRIDER_COLL_HOST=pack).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "p2p_buffers.hpp"
#include "test_nodes.hpp"

namespace strider::testing {
namespace {

constexpr int kInts = 64;               // a message: every third int of a vector
constexpr int kExtent = 3 * kInts - 2;  // the vector's extent in ints

std::vector<unsigned char> as_bytes(const std::vector<int>& ints) {
  std::vector<unsigned char> bytes(ints.size() * sizeof(int));
  std::memcpy(bytes.data(), ints.data(), bytes.size());
  return bytes;
}

std::vector<int> as_ints(const std::vector<unsigned char>& bytes) {
  std::vector<int> ints(bytes.size() / sizeof(int));
  std::memcpy(ints.data(), bytes.data(), ints.size() * sizeof(int));
  return ints;
}

bool same_node_on() {
  const char* v = std::getenv("STRIDER_SAME_NODE");
  return v == nullptr || std::string(v) != "0";
}

class VirtualNodes : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!strider_loaded()) GTEST_SKIP() << "needs Strider preloaded";
    if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
    nodes_ = world_nodes();
    MPI_Type_vector(kInts, 1, 3, MPI_INT, &strided_);
    MPI_Type_commit(&strided_);
  }
  void TearDown() override {
    if (strided_ != MPI_DATATYPE_NULL) MPI_Type_free(&strided_);
  }

  // A vector of `elements` strided elements: the sent ints `value(element, i)`, -1 elsewhere.
  template <class Value>
  static std::vector<int> strided_ints(int elements, Value value) {
    std::vector<int> ints(static_cast<std::size_t>(elements) * kExtent, -1);
    for (int e = 0; e < elements; ++e) {
      for (int i = 0; i < kInts; ++i) ints[e * kExtent + 3 * i] = value(e, i);
    }
    return ints;
  }

  // Whether every rank of `comm` shares this rank's node, by the tests' model.
  bool within_my_node(MPI_Comm comm) const {
    MPI_Group group, world;
    MPI_Comm_group(comm, &group);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int size = 0;
    MPI_Group_size(group, &size);
    std::vector<int> ranks(size), world_ranks(size);
    for (int r = 0; r < size; ++r) ranks[r] = r;
    MPI_Group_translate_ranks(group, size, ranks.data(), world, world_ranks.data());
    MPI_Group_free(&group);
    MPI_Group_free(&world);
    for (int w : world_ranks) {
      if (nodes_[w] != nodes_[me]) return false;
    }
    return true;
  }

  // One Allgather of a strided element per rank on `comm`, checked; the GPU-to-GPU collectives
  // it added to this rank's count.
  std::uint64_t allgather(MPI_Comm comm, const std::string& what) {
    int rank = 0, size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const auto value = [](int r, int i) { return 10000 * (r + 1) + i; };
    PlacedBuffer send(placement(Role::kSend),
                      as_bytes(strided_ints(1, [&](int, int i) { return value(rank, i); })), 0);
    PlacedBuffer recv(placement(Role::kRecv),
                      as_bytes(strided_ints(size, [](int, int) { return -1; })), 0);
    const strider_stats before = stats();
    EXPECT_EQ(MPI_Allgather(send.origin(), 1, strided_, recv.origin(), 1, strided_, comm),
              MPI_SUCCESS)
        << what;
    const strider_stats after = stats();
    EXPECT_EQ(as_ints(recv.read()), strided_ints(size, value)) << what;
    return after.collectives_same_node - before.collectives_same_node;
  }

  std::vector<long> nodes_;
  MPI_Datatype strided_ = MPI_DATATYPE_NULL;
  const int me = world_rank(), n = world_size();
};

// Every ordered pair in turn, the receive posted before the send: an offer is certain where the
// two share a node, and impossible where they do not.
TEST_F(VirtualNodes, OffersOnlyBetweenRanksOfOneNode) {
  constexpr int kTag = 3;
  for (int sender = 0; sender < n; ++sender) {
    for (int receiver = 0; receiver < n; ++receiver) {
      if (sender == receiver) continue;
      const std::string pair = "offers from world rank " + std::to_string(sender) +
                               " to world rank " + std::to_string(receiver);
      const auto value = [&](int, int i) { return 1000 * sender + 100 * receiver + i; };
      const bool sends = me == sender, receives = me == receiver;
      PlacedBuffer buffer(
          placement(sends ? Role::kSend : Role::kRecv),
          as_bytes(strided_ints(1, [&](int e, int i) { return sends ? value(e, i) : -1; })), 0);
      const strider_stats before = stats();
      MPI_Request request = MPI_REQUEST_NULL;
      if (receives) {
        EXPECT_EQ(MPI_Irecv(buffer.origin(), 1, strided_, sender, kTag, MPI_COMM_WORLD, &request),
                  MPI_SUCCESS);
      }
      MPI_Barrier(MPI_COMM_WORLD);  // posted (and offered) before it is sent
      if (sends) {
        EXPECT_EQ(MPI_Send(buffer.origin(), 1, strided_, receiver, kTag, MPI_COMM_WORLD),
                  MPI_SUCCESS);
      }
      if (receives) EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
      const strider_stats after = stats();
      const std::uint64_t expect = same_node_on() && nodes_[sender] == nodes_[receiver] ? 1 : 0;
      if (receives) {
        EXPECT_EQ(as_ints(buffer.read()), strided_ints(1, value)) << pair;
        EXPECT_EQ(after.offers_made - before.offers_made, expect) << pair << ": made";
        EXPECT_EQ(after.offers_used - before.offers_used, expect) << pair << ": used";
      }
      if (sends) EXPECT_EQ(after.offers_taken - before.offers_taken, expect) << pair << ": taken";
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
}

// All ranks, each node's own ranks, and one rank of each node: GPU to GPU exactly on the
// communicators within one node (with device memory on every rank).
TEST_F(VirtualNodes, CollectivesGpuToGpuOnlyWithinOneNode) {
  const bool gpu =
      same_node_on() && std::string(placement_summary()) == "device memory on every rank";
  // This rank's node named by its lowest world rank, and its place in that node.
  int node = me, place = 0;
  for (int w = 0; w < me; ++w) {
    if (nodes_[w] == nodes_[me]) {
      node = std::min(node, w);
      ++place;
    }
  }
  MPI_Comm all = MPI_COMM_NULL, mine = MPI_COMM_NULL, across = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &all);
  MPI_Comm_split(MPI_COMM_WORLD, node, me, &mine);
  MPI_Comm_split(MPI_COMM_WORLD, place, me, &across);
  for (auto [comm, what] : {std::pair{all, "all ranks"}, std::pair{mine, "this node's ranks"},
                            std::pair{across, "one rank of each node"}}) {
    int size = 0;
    MPI_Comm_size(comm, &size);
    const std::uint64_t expect = gpu && size > 1 && within_my_node(comm) ? 1 : 0;
    EXPECT_EQ(allgather(comm, what), expect)
        << "GPU-to-GPU Allgather on " << what << " (" << size << " ranks)";
  }
  MPI_Comm_free(&across);
  MPI_Comm_free(&mine);
  MPI_Comm_free(&all);
}

}  // namespace
}  // namespace strider::testing
