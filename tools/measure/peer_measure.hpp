// What a kernel pays to write into the other rank's GPU memory over CUDA IPC (same node only):
// the same-node peer_write table of the perf file, which the model's offer cost uses.
#pragma once

#include <optional>

#include "measure/gpu_measure.hpp"
#include "model/log_table.hpp"

namespace strider::measure {

// Collective over MPI_COMM_WORLD (exactly two ranks, on one node): rank 1 exports GPU memory,
// rank 0 maps it and times one copy kernel per model::grid::transfer_bytes() size into it, then
// rank 1 checks the bytes that landed. Rank 0 gets the table; nothing where the memory cannot
// be exported or mapped (no CUDA IPC between the ranks), on either rank alike.
std::optional<model::Table1D> measure_peer_write(const RepeatLimits& limits,
                                                 const Advance& advance);
double peer_write_weight();

}  // namespace strider::measure
