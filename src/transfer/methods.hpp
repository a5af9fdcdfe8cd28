// The transfer methods as objects: what each needs from the MPI and the wire buffer, and what
// it costs, from the performance model. The enum (model::Method) names them across the
// configuration, the perf file and the C API; these say how each behaves. A new method (e.g.
// same-node zero-copy) is a new subclass and a new enum value.
#pragma once

#include "model/cost_model.hpp"
#include "transfer/method.hpp"
#include "transfer/wire_buffers.hpp"

namespace strider::transfer {

enum class Side { Send, Receive };

class TransferMethod {
 public:
  virtual ~TransferMethod() = default;
  virtual Method kind() const = 0;
  // Where the packed bytes wait between the engine and the MPI.
  virtual WireMemory wire_memory() const = 0;
  // Whether the MPI is handed GPU memory, which only a CUDA-aware MPI may get.
  virtual bool needs_cuda_aware_mpi() const { return false; }
  // Whether the pack and unpack kernels reach the wire buffer themselves (no copy through
  // GPU scratch).
  virtual bool kernel_reaches_wire() const { return true; }

  // The model's prediction of this method for `shape` moved to or from a peer at `placement`:
  // both sides and the transfer (available false where the method cannot serve, or the model
  // does not cost it).
  virtual model::MethodCost cost(const model::ObjectShape& shape, model::Placement placement,
                                 bool mpi_cuda_aware) const;
  // What one side minimizes when it chooses: its own pack or unpack plus the transfer.
  double cost(const model::ObjectShape& shape, model::Placement placement, bool mpi_cuda_aware,
              Side side) const;
};

// The one object of each method.
const TransferMethod& transfer_method(Method kind);

}  // namespace strider::transfer
