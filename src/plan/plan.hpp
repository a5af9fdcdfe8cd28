// A datatype's packing plan: its canonical form and bounds, built once at MPI_Type_commit.
#pragma once

#include <mpi.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "canon/canonicalize.hpp"
#include "engine/cuda/gpu_engine.hpp"
#include "engine/cuda/type_state.hpp"
#include "model/object_shape.hpp"
#include "plan/decode.hpp"

namespace strider::plan {

struct Plan {
  bool supported = false;
  std::string reason;         // why not supported
  canon::CanonicalForm form;  // valid when supported
  decode::Bounds bounds;      // the MPI's own figures
  int ir_depth = 0;
  model::ElementShape shape;      // what the performance model reads (valid when supported)
  bool host_engine_wins = false;  // STRIDER_HOST_ENGINE=auto's verdict, decided once
  engine::cuda::TypeState gpu;    // the GPU engine's per-type state (device tables)

  // The type as the GPU engine sees it (valid when supported).
  engine::cuda::Layout gpu_layout() const { return {form, bounds.extent, gpu}; }
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
