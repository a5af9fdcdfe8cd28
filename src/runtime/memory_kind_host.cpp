// Build without CUDA: every pointer is host memory.
#include "runtime/memory_kind.hpp"

namespace strider::runtime {

MemoryKind memory_kind(const void*) { return MemoryKind::Host; }

}  // namespace strider::runtime
