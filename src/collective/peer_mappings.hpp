// The peers' allocations one same-node call maps (CUDA IPC, wire_ipc.hpp): each handle mapped
// and pinned once per call however many pieces lie in it, and unpinned when the call's object
// goes, once no kernel reads them any more.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ipc/wire_ipc.hpp"

namespace strider::collective {

class PeerMappings {
 public:
  PeerMappings() = default;
  PeerMappings(const PeerMappings&) = delete;
  PeerMappings& operator=(const PeerMappings&) = delete;
  ~PeerMappings() {
    for (const auto& [handle, base] : mapped_) ipc::unpin_wire(base);
  }

  // The allocation of `handle` (`bytes` long) mapped for kernels on GPU `device`; null with
  // `why` when it cannot be mapped.
  std::byte* map(const ipc::WireHandle& handle, std::int64_t bytes, int device, std::string& why) {
    for (const auto& [h, base] : mapped_) {
      if (h.bytes == handle.bytes) return base;
    }
    std::byte* base = ipc::import_wire(handle, static_cast<std::size_t>(bytes), device, why);
    if (base) mapped_.emplace_back(handle, base);
    return base;
  }

 private:
  std::vector<std::pair<ipc::WireHandle, std::byte*>> mapped_;
};

}  // namespace strider::collective
