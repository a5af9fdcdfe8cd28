// Without CUDA no wire is ever device memory, so none is shared.
#include "ipc/wire_ipc.hpp"

namespace strider::ipc {

bool export_wire(const WireBuffer&, WireHandle&, std::string& error) {
  error = "built without CUDA";
  return false;
}

std::byte* import_wire(const WireHandle&, std::size_t, int, std::string& error) {
  error = "built without CUDA";
  return nullptr;
}

void unpin_wire(const std::byte*) {}

void forget_wire_export(const void*) {}

void close_wire_imports() {}

}  // namespace strider::ipc
