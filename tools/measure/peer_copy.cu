// A plain copy kernel, launched and waited for: what writing contiguous bytes from this GPU's
// memory into a peer's (mapped over CUDA IPC) costs, beside the local pack tables.
#include <cuda_runtime.h>

#include <cstdint>

#include "measure/peer_copy.hpp"

namespace strider::measure {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 2048;  // enough to fill an H200; the loop strides over the rest

// 16-byte words where both pointers allow it, then the tail byte by byte.
__global__ void copy_bytes(unsigned char* dst, const unsigned char* src, std::size_t bytes) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool aligned =
      (reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src)) % 16 == 0;
  std::size_t done = 0;
  if (aligned) {
    const std::size_t words = bytes / 16;
    auto* d = reinterpret_cast<uint4*>(dst);
    const auto* s = reinterpret_cast<const uint4*>(src);
    for (std::size_t i = first; i < words; i += stride) d[i] = s[i];
    done = words * 16;
  }
  for (std::size_t i = done + first; i < bytes; i += stride) dst[i] = src[i];
}

}  // namespace

int copy_and_wait(void* dst, const void* src, std::size_t bytes, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  const std::size_t words = bytes / 16 + 1;
  const auto blocks =
      static_cast<int>(words / kThreads + 1 < kMaxBlocks ? words / kThreads + 1 : kMaxBlocks);
  copy_bytes<<<blocks, kThreads, 0, s>>>(static_cast<unsigned char*>(dst),
                                         static_cast<const unsigned char*>(src), bytes);
  const cudaError_t rc = cudaGetLastError();
  if (rc != cudaSuccess) return rc;
  return cudaStreamSynchronize(s);
}

}  // namespace strider::measure
