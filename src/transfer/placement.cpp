#include "transfer/placement.hpp"

#include <mutex>
#include <vector>

#include "runtime/node_comm.hpp"

namespace strider::transfer {
namespace {

struct NodeLayout {
  bool known = false;
  bool single_node = false;
  std::vector<int> node_of_world_rank;  // a node's lowest world rank names it
  int my_node = -1;
  int keyval = MPI_KEYVAL_INVALID;  // caches each communicator's peer nodes
};

NodeLayout& layout() {
  static auto* l = new NodeLayout;  // leaked: read by calls during static destruction
  return *l;
}

// A communicator's peers' nodes (remote group for an intercommunicator), cached as an
// attribute so it goes with the communicator (handles are reused after MPI_Comm_free).
using PeerNodes = std::vector<int>;

int delete_peer_nodes(MPI_Comm, int, void* value, void*) {
  delete static_cast<PeerNodes*>(value);
  return MPI_SUCCESS;
}

const PeerNodes* peer_nodes(MPI_Comm comm, const NodeLayout& l) {
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, l.keyval, &value, &found) == MPI_SUCCESS && found) {
    return static_cast<const PeerNodes*>(value);
  }
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  if ((inter ? PMPI_Comm_remote_group(comm, &group) : PMPI_Comm_group(comm, &group)) !=
      MPI_SUCCESS) {
    return nullptr;
  }
  int size = 0;
  PMPI_Group_size(group, &size);
  std::vector<int> ranks(static_cast<std::size_t>(size)), world_ranks(ranks.size());
  for (int r = 0; r < size; ++r) ranks[static_cast<std::size_t>(r)] = r;
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  const int rc = PMPI_Group_translate_ranks(group, size, ranks.data(), world, world_ranks.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  if (rc != MPI_SUCCESS) return nullptr;
  auto* nodes = new PeerNodes(ranks.size(), -1);  // -1: outside MPI_COMM_WORLD (spawned)
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const int w = world_ranks[r];
    if (w >= 0 && w < static_cast<int>(l.node_of_world_rank.size())) {
      (*nodes)[r] = l.node_of_world_rank[static_cast<std::size_t>(w)];
    }
  }
  if (PMPI_Comm_set_attr(comm, l.keyval, nodes) != MPI_SUCCESS) {
    delete nodes;
    return nullptr;
  }
  return nodes;
}

}  // namespace

void learn_node_layout() {
  NodeLayout l;
  int world_size = 0, world_rank = 0, node_size = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  // Every rank takes part in both collectives whatever happens before them (a rank that
  // skipped one would leave the others waiting); failures are voted on at the end.
  MPI_Comm node = MPI_COMM_NULL;
  int ok = runtime::node_communicator(MPI_COMM_WORLD, &node) == MPI_SUCCESS;
  int leader = ok ? world_rank : -1;
  if (ok) {
    ok = PMPI_Comm_size(node, &node_size) == MPI_SUCCESS &&
         PMPI_Allreduce(&world_rank, &leader, 1, MPI_INT, MPI_MIN, node) == MPI_SUCCESS;
    PMPI_Comm_free(&node);
  }
  l.node_of_world_rank.assign(static_cast<std::size_t>(world_size), -1);
  int all_ok = 0;
  if (PMPI_Allgather(&leader, 1, MPI_INT, l.node_of_world_rank.data(), 1, MPI_INT,
                     MPI_COMM_WORLD) != MPI_SUCCESS ||
      PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS || !all_ok) {
    return;
  }
  if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_peer_nodes, &l.keyval, nullptr) !=
      MPI_SUCCESS) {
    return;
  }
  l.single_node = node_size == world_size;
  l.my_node = leader;
  l.known = true;
  layout() = std::move(l);
}

model::Placement peer_placement(MPI_Comm comm, int rank) {
  const NodeLayout& l = layout();
  if (l.known && l.single_node) return model::Placement::SameNode;
  if (!l.known || rank < 0) return model::Placement::Remote;
  int node = -1;
  if (comm == MPI_COMM_WORLD) {
    if (rank < static_cast<int>(l.node_of_world_rank.size())) {
      node = l.node_of_world_rank[static_cast<std::size_t>(rank)];
    }
  } else {
    // Serialized: two threads must not both set the attribute (setting it again deletes the
    // value the other may be reading).
    static std::mutex mutex;
    std::lock_guard lock(mutex);
    if (const PeerNodes* nodes = peer_nodes(comm, l);
        nodes != nullptr && rank < static_cast<int>(nodes->size())) {
      node = (*nodes)[static_cast<std::size_t>(rank)];
    }
  }
  return node >= 0 && node == l.my_node ? model::Placement::SameNode : model::Placement::Remote;
}

}  // namespace strider::transfer
