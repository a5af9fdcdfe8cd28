// Who does what in a rooted collective (Gather, Scatter, Bcast, Reduce): on an
// intracommunicator the root both sends and receives; on an intercommunicator the root
// (MPI_ROOT) only receives or only sends, the other ranks of its group (MPI_PROC_NULL) take no
// part, and the remote group's ranks do the other half.
#pragma once

#include <mpi.h>

#include "collective/call.hpp"

namespace strider::collective {

enum class Role { Root, Other, Idle };

inline Role role_of(const Group& g, int root) {
  if (!g.inter) return g.rank == root ? Role::Root : Role::Other;
  if (root == MPI_ROOT) return Role::Root;
  if (root == MPI_PROC_NULL) return Role::Idle;
  return Role::Other;
}

}  // namespace strider::collective
