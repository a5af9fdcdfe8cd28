// Host placement of the point-to-point test's buffers (the GPU build uses
// tests/gpu/gpu_p2p_buffers.cpp instead).
#include "p2p_buffers.hpp"

namespace strider::testing {

Placement& placement(Role) { return host_placement(); }

const char* placement_summary() { return "host memory on every rank"; }

}  // namespace strider::testing
