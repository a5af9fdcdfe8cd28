// Host placement of the point-to-point test's buffers (the GPU build uses
// tests/gpu/gpu_p2p_buffers.cpp instead).
#include "p2p_buffers.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

namespace strider::testing {
namespace {

class HostPlacement final : public Placement {
 public:
  const char* name() const override { return "host"; }
  void* alloc(std::size_t bytes) override {
    void* p = std::malloc(bytes ? bytes : 1);
    if (!p) throw std::bad_alloc();
    return p;
  }
  void free(void* p) override { std::free(p); }
  void upload(void* dst, const void* src, std::size_t n) override { std::memcpy(dst, src, n); }
  void download(void* dst, const void* src, std::size_t n) override { std::memcpy(dst, src, n); }
};

}  // namespace

Placement& placement(Role) {
  static HostPlacement host;
  return host;
}

const char* placement_summary() { return "host memory on every rank"; }

}  // namespace strider::testing
