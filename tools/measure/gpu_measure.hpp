// What one rank measures on its GPU alone: launch + synchronize, pinned copies, and the pack
// and unpack tables of the model (model::grid's blocks x objects, per target (device, mapped,
// staged), direction, shape and stride ratio).
#pragma once

#include <functional>
#include <string>

#include "measure/repeat.hpp"
#include "model/perf_data.hpp"

namespace strider::measure {

using Advance = std::function<void(double weight, const std::string& what)>;

double measure_launch_sync(const RepeatLimits& limits);
// Fills data.d2h and data.h2d over model::grid::transfer_bytes().
void measure_copies(model::PerfData& data, const RepeatLimits& limits, const Advance& advance);
// Appends every pack table to data.pack.
void measure_pack_tables(model::PerfData& data, const RepeatLimits& limits, const Advance& advance);

// Progress weights of the phases above, in the units advance() receives.
double copies_weight();
double pack_tables_weight();
// A measurement's weight: about its expected time in ms (so the ETA holds).
double weight_of(double bytes);

}  // namespace strider::measure
