// The tests' own model of which world ranks share a node as Strider must see it: the
// shared-memory node, split into virtual nodes of STRIDER_TEST_NODE_SIZE consecutive world ranks
// where that is set (README, test-only). Independent of Strider's code, so that a test compares
// what Strider did against it. STRIDER_TEST_EXPECT_NODE_SIZE, where set, is assumed instead of
// STRIDER_TEST_NODE_SIZE: a run that tells Strider nothing but expects a split must fail.
#pragma once

#include <vector>

namespace strider::testing {

// Collective over MPI_COMM_WORLD: a node key per world rank, equal for ranks of one node.
std::vector<long> world_nodes();

// The virtual node size assumed (0: no split).
long expected_node_size();

}  // namespace strider::testing
