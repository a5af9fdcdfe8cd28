// Reading and writing the perf file for strider-measure.
#pragma once

#include <string>

#include "model/perf_data.hpp"

namespace strider::measure {

// Writes atomically (a temporary file renamed over the target), creating missing folders.
// Throws std::runtime_error on failure.
void save_perf_file(const std::string& path, const model::PerfData& data);

// Keeps the transfers of placements this run did not measure from an existing file of the
// same machine (so same-node and cross-node runs accumulate in one file). Returns the
// placements kept.
std::string merge_other_placements(const std::string& path, model::PerfData& data);

// A few lines on what a file holds (for the end of a run and --from).
std::string summarize(const model::PerfData& data);

}  // namespace strider::measure
