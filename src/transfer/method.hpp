// The method a transfer uses (model/method.hpp lists them). The wire format is the same for all:
// the packed bytes as one MPI_PACKED message, so sender and receiver choose independently.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/cost_model.hpp"
#include "runtime/config.hpp"

namespace strider::transfer {

using model::Method;
using model::MethodRequest;

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
