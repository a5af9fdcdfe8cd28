// Build without CUDA: every pointer is host memory.
#include "runtime/memory_kind.hpp"

namespace strider::runtime {

PointerInfo pointer_info(const void*) { return {}; }

}  // namespace strider::runtime
