// A kernel that stands for application work queued on the legacy default stream: it waits
// about `cycles` clock cycles, then writes base + step * i into each of n ints. The in-place
// tests queue it before an MPI call that must see (or must not be overtaken by) its writes.
#pragma once

__global__ void late_fill(int* out, long n, int base, int step, long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    out[i] = base + step * static_cast<int>(i);
  }
}
