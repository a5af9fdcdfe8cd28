// strider-explain's command line. Parsed by hand rather than with CLI11 so that the tool builds
// wherever the library does (a GPU machine may have only MPI, CUDA and CMake).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/perf_data.hpp"

namespace strider::explain {

// --count / --peer: also print the performance model's view of sending `count` elements.
struct PredictionRequest {
  bool wanted = false;
  long long count = 1;
  model::Placement peer = model::Placement::SameNode;
  std::string perf_file;
};

struct Options {
  std::vector<std::string> types;  // empty: read them from stdin
  PredictionRequest request;
  bool version = false;  // --version: the MPI the process runs on and the build's ABI
};

// The options, or empty after printing --help (exit 0: `exit_status`) or an error (exit 1).
std::optional<Options> parse_options(int argc, char** argv, int& exit_status);

}  // namespace strider::explain
