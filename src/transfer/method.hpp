// The method a transfer uses (model/method.hpp names them; the model costs them): how each one
// behaves, in one table, and how the one a transfer takes is chosen. The wire format is the same
// for all: the packed bytes as one MPI_PACKED message, so sender and receiver choose
// independently.
#pragma once

#include <cstdint>
#include <string_view>

#include "ipc/wire_buffers.hpp"
#include "model/cost_model.hpp"
#include "runtime/config.hpp"

namespace strider::transfer {

using model::Method;
using model::MethodRequest;

// What a method needs of the wire buffer.
struct MethodTraits {
  ipc::WireMemory wire_memory;  // where the packed bytes wait between the engine and the MPI
  // The pack and unpack kernels reach the wire buffer themselves (no copy through GPU scratch).
  bool kernel_reaches_wire;
};
// OneShot: the kernel packs straight into mapped pinned host memory and unpacks from it.
// Staged: GPU scratch, then one DMA copy to or from pinned host memory. Device: GPU memory that
// a CUDA-aware MPI moves itself. Host: a host buffer packed by the CPU (STRIDER_P2P_HOST=pack).
const MethodTraits& traits_of(Method method);

// Pure. `requested` is STRIDER_METHOD (or strider_set_method); `automatic` what the performance
// model picks for this transfer, taken when auto is requested. A CUDA-unaware MPI never gets
// device memory: device becomes staged there.
Method choose_method(MethodRequest requested, bool mpi_cuda_aware, Method automatic);

// The process's current request: STRIDER_METHOD until strider_set_method changes it.
MethodRequest requested_method();
void set_requested_method(MethodRequest method);
// Parses "auto", "device", "oneshot" or "staged"; false for anything else.
bool parse_method(std::string_view text, MethodRequest& out);

}  // namespace strider::transfer
