// Without CUDA there is no GPU memory to share.
#include "ipc/memory_export.hpp"

namespace strider::ipc {

bool export_memory(const void*, int, MemoryExport&, std::string& error) {
  error = "built without CUDA";
  return false;
}

bool still_exported(const MemoryExport&) { return false; }

std::byte* own_export_base(const WireHandle&) { return nullptr; }

}  // namespace strider::ipc
