// A datatype's packing plan: its canonical form and bounds, built once at MPI_Type_commit.
#pragma once

#include <mpi.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "canon/canonicalize.hpp"
#include "model/object_shape.hpp"
#include "plan/decode.hpp"

namespace strider::plan {

// State an engine attaches to a plan (e.g. a block list's device tables), released with it.
struct EngineCache {
  std::mutex mutex;
  std::shared_ptr<void> state;
};

struct Plan {
  bool supported = false;
  std::string reason;         // why not supported
  canon::CanonicalForm form;  // valid when supported
  decode::Bounds bounds;      // the MPI's own figures
  int ir_depth = 0;
  model::ElementShape shape;      // what the performance model reads (valid when supported)
  bool host_engine_wins = false;  // STRIDER_HOST_ENGINE=auto's verdict, decided once
  mutable EngineCache gpu;        // the GPU engine's per-type state
};

// What building a plan went through, for strider-explain and debug logs.
struct Explanation {
  ir::Node ir;
  std::vector<canon::Step> steps;
};

// Decodes and canonicalizes `type`; never throws. Fills `explanation` if given.
std::shared_ptr<const Plan> build_plan(MPI_Datatype type, Explanation* explanation = nullptr);

// Multi-line human-readable description (IR, steps, canonical form).
std::string describe(const Plan& plan, const Explanation* explanation = nullptr);

}  // namespace strider::plan
