// Build without CUDA: the GPU engine serves nothing.
#include "engine/cuda/gpu_engine.hpp"

namespace strider::engine::cuda {

Outcome pack(const plan::Plan&, std::int64_t, const runtime::BufferView&,
             const runtime::BufferView&, std::string&) {
  return Outcome::Fallback;
}

Outcome unpack(const plan::Plan&, std::int64_t, const runtime::BufferView&,
               const runtime::BufferView&, std::string&) {
  return Outcome::Fallback;
}

bool copy(void*, const void*, std::size_t, std::string& error) {
  error = "built without CUDA";
  return false;
}

bool available() { return false; }

}  // namespace strider::engine::cuda
