// The perf file's JSON form in a build without nlohmann-json: the model keeps its built-in
// defaults (selector.cpp says why once), so the library builds where only MPI and CUDA are.
#include "model/perf_json.hpp"

namespace strider::model {

std::string to_json_text(const PerfData&) { return {}; }

bool from_json_text(const std::string&, PerfData&, std::string& error) {
  error = "perf files cannot be read in this build (built without nlohmann-json)";
  return false;
}

}  // namespace strider::model
