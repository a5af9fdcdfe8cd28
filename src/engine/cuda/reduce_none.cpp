// Build without CUDA: no reduction is computed on a GPU.
#include "engine/cuda/reduce.hpp"

namespace strider::engine::cuda {

Outcome reduce(ReduceKind, Span<const std::byte* const>, std::byte*, std::int64_t, int,
               std::string& error) {
  error = "built without CUDA";
  return Outcome::Fallback;
}

}  // namespace strider::engine::cuda
