#pragma once

#include <cstddef>

namespace strider::measure {

// Copies `bytes` from `src` to `dst` (GPU memory, either possibly a peer's mapped over CUDA IPC)
// with one kernel on `stream` (a cudaStream_t) and waits for it; a cudaError_t.
int copy_and_wait(void* dst, const void* src, std::size_t bytes, void* stream);

}  // namespace strider::measure
