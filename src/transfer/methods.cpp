#include "transfer/methods.hpp"

#include <limits>

#include "transfer/perf_model.hpp"

namespace strider::transfer {
namespace {

// Packed by the kernel straight into mapped pinned host memory, unpacked straight from it.
class OneShot final : public TransferMethod {
 public:
  Method kind() const override { return Method::OneShot; }
  WireMemory wire_memory() const override { return WireMemory::Pinned; }
};

// Packed into GPU scratch, then one DMA copy to pinned host memory (the reverse to receive).
class Staged final : public TransferMethod {
 public:
  Method kind() const override { return Method::Staged; }
  WireMemory wire_memory() const override { return WireMemory::Pinned; }
  bool kernel_reaches_wire() const override { return false; }
};

// Packed into GPU memory that the CUDA-aware MPI moves itself.
class Device final : public TransferMethod {
 public:
  Method kind() const override { return Method::Device; }
  WireMemory wire_memory() const override { return WireMemory::Device; }
  bool needs_cuda_aware_mpi() const override { return true; }
};

// A host buffer packed by the CPU (STRIDER_P2P_HOST=pack); the model does not cost it.
class Host final : public TransferMethod {
 public:
  Method kind() const override { return Method::Host; }
  WireMemory wire_memory() const override { return WireMemory::Host; }
  model::MethodCost cost(const model::ObjectShape&, model::Placement, bool) const override {
    return {};
  }
};

}  // namespace

model::MethodCost TransferMethod::cost(const model::ObjectShape& shape, model::Placement placement,
                                       bool mpi_cuda_aware) const {
  return perf_model().predict(shape, placement, mpi_cuda_aware)[static_cast<int>(kind())];
}

double TransferMethod::cost(const model::ObjectShape& shape, model::Placement placement,
                            bool mpi_cuda_aware, Side side) const {
  const model::MethodCost c = cost(shape, placement, mpi_cuda_aware);
  if (!c.available) return std::numeric_limits<double>::infinity();
  return c.side(side == Side::Receive);
}

const TransferMethod& transfer_method(Method kind) {
  static const OneShot oneshot;
  static const Staged staged;
  static const Device device;
  static const Host host;
  switch (kind) {
    case Method::OneShot:
      return oneshot;
    case Method::Staged:
      return staged;
    case Method::Device:
      return device;
    case Method::Host:
      break;
  }
  return host;
}

}  // namespace strider::transfer
