// Reductions computed on the GPUs of one node: when every rank of an intracommunicator runs on
// this node with GPU buffers, and the op and type are predefined ones a kernel computes
// (reduce_kind.hpp), each rank copies its input into a device wire, maps its peers' wires
// through CUDA IPC and folds, in rank order, the inputs its result needs straight into its
// output: no host copy, no op of the MPI's. Every rank folds in the same order, so an Allreduce
// gives the same bits everywhere.
//
// Protocol, every rank at the same blocking reduction (intracommunicator, the same-node
// verdict of same_node.hpp):
//   1. Each rank copies its input into a device wire (after the work the application queued
//      on the default stream) and exports it.
//   2. MPI_Allgather of one record per rank: whether it takes part, its kind, input length and
//      wire. Unless all take part with the same kind and length, every rank takes its usual
//      path (the MPI then checks and reports the arguments as it would).
//   3. Each rank maps the wires it reads; MPI_Allreduce(MIN) of that: all mapped, or every
//      rank takes its usual path.
//   4. One kernel folds the inputs into the output; MPI_Barrier, after which no peer reads
//      this rank's wire.
// Nonblocking forms, intercommunicators and ranks on several nodes take the host path.
#pragma once

#include <mpi.h>

namespace strider::collective {

// What one rank gives to and takes from a reduction.
struct ReductionShape {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  const void* input = nullptr;  // this rank's contribution (in place: the receive buffer)
  int input_count = 0;          // its elements; the same on every rank
  void* output = nullptr;       // where this rank's result goes
  int output_count = 0;         // its elements (0: no result here)
  int output_first = 0;         // the input element the result starts at (reduce-scatter)
  int folded = 0;               // inputs folded into it: those of ranks 0..folded-1
  bool aliased = false;         // the same buffer as input and output without MPI_IN_PLACE
};

// Every rank of `comm` calls this at every blocking reduction, also a rank whose buffers are
// not Strider's. True when the call was done here, with its result in `rc`; false when every
// rank takes its usual path.
bool same_node_reduction(MPI_Comm comm, const ReductionShape& shape, int& rc);

}  // namespace strider::collective
