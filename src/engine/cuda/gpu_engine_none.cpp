// Build without CUDA: the GPU engine serves nothing and holds no device memory.
#include "engine/cuda/gpu_engine.hpp"

namespace strider::engine::cuda {

void release_table(const TypeState::Table&) {}

Outcome pack(const Layout&, std::int64_t, const runtime::BufferView&, const runtime::BufferView&,
             const Policy&, std::string&) {
  return Outcome::Fallback;
}

Outcome unpack(const Layout&, std::int64_t, const runtime::BufferView&, const runtime::BufferView&,
               const Policy&, std::string&) {
  return Outcome::Fallback;
}

Outcome pack_batch(Span<const BatchItem>, const runtime::BufferView&, std::int64_t, const Policy&,
                   std::string&) {
  return Outcome::Fallback;
}

Outcome unpack_batch(const runtime::BufferView&, std::int64_t, Span<const BatchItem>, const Policy&,
                     std::string&) {
  return Outcome::Fallback;
}

Outcome copy_batch(Span<const BatchCopy>, int, const Policy&, std::string&) {
  return Outcome::Fallback;
}

Outcome settle_default_stream(int, std::string&) { return Outcome::Fallback; }

bool default_stream_idle(int) { return false; }

Outcome copy_layout(const Layout&, std::int64_t, const runtime::BufferView&, const Layout&,
                    std::int64_t, const runtime::BufferView&, const Policy&, std::string&) {
  return Outcome::Fallback;
}

bool copy(void*, const void*, std::size_t, std::string& error) {
  error = "built without CUDA";
  return false;
}

bool available() { return false; }

int device_count() { return 0; }

int current_device() { return -1; }

bool set_current_device(int) { return false; }

std::uint64_t device_fingerprint(int) { return 0; }

}  // namespace strider::engine::cuda
