// Host memory for the point-to-point test's buffers: the whole placement of the host build,
// and the odd ranks' in the GPU build's mixed placement.
#include <cstdlib>
#include <cstring>
#include <new>

#include "p2p_buffers.hpp"

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

Placement& host_placement() {
  static HostPlacement host;
  return host;
}

}  // namespace strider::testing
