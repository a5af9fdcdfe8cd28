// The launch + synchronize cost: an empty kernel on a stream, waited for from the host.
#include <cuda_runtime.h>

#include "measure/launch.hpp"

namespace strider::measure {
namespace {

__global__ void empty_kernel() {}

}  // namespace

int launch_empty_and_wait(void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  empty_kernel<<<1, 1, 0, s>>>();
  const cudaError_t rc = cudaGetLastError();
  if (rc != cudaSuccess) return rc;
  return cudaStreamSynchronize(s);
}

}  // namespace strider::measure
