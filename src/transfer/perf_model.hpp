// The process's performance model: the perf file strider-measure wrote for this machine
// ($STRIDER_PERF_FILE or ${XDG_CACHE_HOME:-~/.cache}/strider/perf.json), read on first need.
#pragma once

#include "model/selector.hpp"

namespace strider::transfer {

// Loads lazily; a file that cannot be used gives the built-in defaults and one warning (on
// rank 0; the other ranks log it at info level).
model::Selector& perf_model();

// Reads `path` (empty: the configured file) as the runtime does, checking it against this
// machine's GPU where one can be identified. No logging (strider-explain shows the outcome).
model::LoadedModel load_perf_file(const std::string& path = {});

}  // namespace strider::transfer
