#include "transport/placement.hpp"

#include <vector>

namespace strider::transport {
namespace {

struct NodeLayout {
  bool known = false;
  bool single_node = false;
  std::vector<int> node_of_world_rank;  // a node's lowest world rank names it
  int my_node = -1;
};

NodeLayout& layout() {
  static auto* l = new NodeLayout;
  return *l;
}

}  // namespace

void learn_node_layout() {
  NodeLayout l;
  int world_size = 0, world_rank = 0, node_size = 0;
  MPI_Comm node = MPI_COMM_NULL;
  if (PMPI_Comm_size(MPI_COMM_WORLD, &world_size) != MPI_SUCCESS ||
      PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank) != MPI_SUCCESS ||
      PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
          MPI_SUCCESS) {
    return;
  }
  int leader = world_rank;
  bool ok = PMPI_Comm_size(node, &node_size) == MPI_SUCCESS &&
            PMPI_Allreduce(&world_rank, &leader, 1, MPI_INT, MPI_MIN, node) == MPI_SUCCESS;
  PMPI_Comm_free(&node);
  l.node_of_world_rank.resize(static_cast<std::size_t>(world_size));
  ok = ok && PMPI_Allgather(&leader, 1, MPI_INT, l.node_of_world_rank.data(), 1, MPI_INT,
                            MPI_COMM_WORLD) == MPI_SUCCESS;
  if (!ok) return;
  l.single_node = node_size == world_size;
  l.my_node = leader;
  l.known = true;
  layout() = std::move(l);
}

model::Placement peer_placement(MPI_Comm comm, int rank) {
  const NodeLayout& l = layout();
  if (l.known && l.single_node) return model::Placement::SameNode;
  if (!l.known || rank < 0) return model::Placement::Remote;
  int world_rank = rank;
  if (comm != MPI_COMM_WORLD) {
    MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    const int rc = inter ? PMPI_Comm_remote_group(comm, &group) : PMPI_Comm_group(comm, &group);
    if (rc != MPI_SUCCESS) return model::Placement::Remote;
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    if (PMPI_Group_translate_ranks(group, 1, &rank, world, &world_rank) != MPI_SUCCESS) {
      world_rank = MPI_UNDEFINED;
    }
    PMPI_Group_free(&group);
    PMPI_Group_free(&world);
  }
  if (world_rank < 0 || world_rank >= static_cast<int>(l.node_of_world_rank.size())) {
    return model::Placement::Remote;  // a peer outside MPI_COMM_WORLD (dynamic processes)
  }
  return l.node_of_world_rank[static_cast<std::size_t>(world_rank)] == l.my_node
             ? model::Placement::SameNode
             : model::Placement::Remote;
}

}  // namespace strider::transport
