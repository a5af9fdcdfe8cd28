// GPU tests skip (exit code 77, CTest's SKIP_RETURN_CODE) where no CUDA device is usable.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>

namespace strider::testing {

constexpr int kSkipExitCode = 77;

inline bool gpu_available() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device here: GPU tests skipped\n");
    return false;
  }
  return true;
}

}  // namespace strider::testing
