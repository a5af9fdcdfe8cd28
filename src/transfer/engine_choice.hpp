// Which engine serves a plan, from the configuration: shared by the calls and strider_describe.
#pragma once

#include "engine/cuda/gpu_engine.hpp"
#include "plan/plan.hpp"
#include "transfer/settings.hpp"

namespace strider::transfer {

// Host buffers: Strider's host engine, or the MPI.
inline bool host_engine_serves(const plan::Plan& plan) {
  const auto engine = settings().host_engine;
  if (!plan.supported || engine == runtime::HostEngine::Off) return false;
  return engine == runtime::HostEngine::On || plan.host_engine_wins;
}

// The GPU engine's tuning as configured (STRIDER_GPU_MAX_WORD).
inline engine::cuda::Policy gpu_policy() {
  engine::cuda::Policy policy;
  policy.max_word = settings().gpu_max_word;
  return policy;
}

// GPU buffers: Strider's kernels, or the staged path.
inline bool gpu_engine_serves(const plan::Plan& plan) {
  return plan.supported && settings().gpu_engine && engine::cuda::available();
}

}  // namespace strider::transfer
