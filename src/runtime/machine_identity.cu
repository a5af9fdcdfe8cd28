#include <cuda_runtime.h>

#include "runtime/machine_identity.hpp"

namespace strider::runtime {

std::optional<model::MachineIdentity> machine_identity() {
  int device = 0;
  cudaDeviceProp props{};
  int driver = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaGetDeviceProperties(&props, device) != cudaSuccess ||
      cudaDriverGetVersion(&driver) != cudaSuccess) {
    (void)cudaGetLastError();  // this failure is ours: the application must not see it later
    return std::nullopt;
  }
  return model::MachineIdentity{props.name, driver, mpi_library_version()};
}

std::string cuda_runtime_version() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) return "unknown";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

}  // namespace strider::runtime
