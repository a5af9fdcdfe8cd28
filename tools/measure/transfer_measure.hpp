// What the two ranks measure together: contiguous ping-pongs between pinned host buffers (and
// GPU buffers on a CUDA-aware MPI), and per transfer method the timings of the LogGOPS fit.
// Collective over MPI_COMM_WORLD (exactly two ranks); rank 0 gets the results.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "measure/gpu_measure.hpp"
#include "model/loggops.hpp"
#include "model/perf_data.hpp"

namespace strider::measure {

// Same node when both ranks share memory (MPI_COMM_TYPE_SHARED).
model::Placement detect_placement();

// Half round trips over model::grid::transfer_bytes(); `device`: GPU buffers.
model::Table1D measure_pingpong(bool device, const RepeatLimits& limits, const Advance& advance);
double pingpong_weight();

// Per method ("host": pinned buffers, no packing; "oneshot", "staged", and "device" when
// `with_device`): GPU objects of `block`-byte blocks at stride 2 x block, over
// model::grid::object_bytes().
std::map<std::string, std::vector<model::LogGopsSample>> measure_loggops(bool with_device,
                                                                         std::int64_t block,
                                                                         const RepeatLimits& limits,
                                                                         const Advance& advance);
double loggops_weight(bool with_device);

}  // namespace strider::measure
