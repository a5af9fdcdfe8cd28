// How a GPU buffer's packed bytes travel in point-to-point. The wire format is the same for all:
// the packed bytes as one MPI_PACKED message, so sender and receiver choose independently.
//   device:  pack into GPU memory and hand that to the MPI (only a CUDA-aware MPI may get it);
//   oneshot: the pack kernel writes straight into mapped pinned host memory, and the receiver's
//            unpack kernel reads straight from it: no copy, no scratch;
//   staged:  pack into GPU scratch, one DMA copy to pinned host memory (reverse on receive);
//   host:    a host buffer packed by the CPU (only with STRIDER_P2P_HOST=pack).
#pragma once

#include <cstdint>
#include <string_view>

#include "model/cost_model.hpp"
#include "runtime/config.hpp"

namespace strider::transfer {

enum class Method { Device, OneShot, Staged, Host };

const char* to_string(Method method);

// The method the performance model's transfer names.
Method method_of(model::Transfer transfer);

// Pure. `requested` is STRIDER_METHOD (or strider_set_method); `automatic` what the performance
// model picks for this transfer, taken when auto is requested. A CUDA-unaware MPI never gets
// device memory: device becomes staged there.
Method choose_method(runtime::MethodChoice requested, bool mpi_cuda_aware,
                     model::Transfer automatic);

// The process's current request: STRIDER_METHOD until strider_set_method changes it.
runtime::MethodChoice requested_method();
void set_requested_method(runtime::MethodChoice method);
// Parses "auto", "device", "oneshot" or "staged"; false for anything else.
bool parse_method(std::string_view text, runtime::MethodChoice& out);

}  // namespace strider::transfer
