// Without CUDA there is no pinned or device memory: those pools never lend.
#include "ipc/wire_buffers.hpp"

namespace strider::ipc {

Allocator pinned_allocator() {
  return {[](std::size_t) -> void* { return nullptr; }, [](void*) {}};
}

Allocator device_allocator(int) {
  return {[](std::size_t) -> void* { return nullptr; }, [](void*) {}};
}

}  // namespace strider::ipc
