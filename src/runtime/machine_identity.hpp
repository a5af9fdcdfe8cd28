// Who this process runs on, as the perf file records it: the GPU's name, the CUDA driver and the
// MPI library. strider-measure writes it and the runtime compares it, with the same function.
#pragma once

#include <optional>
#include <string>

#include "model/perf_data.hpp"

namespace strider::runtime {

// The current GPU's identity (CUDA context needed), or nothing without CUDA or a GPU.
std::optional<model::MachineIdentity> machine_identity();

// The CUDA runtime version as text ("13.0"), or "none".
std::string cuda_runtime_version();

// The first line of MPI_Get_library_version, trailing blanks removed.
std::string mpi_library_version();

}  // namespace strider::runtime
