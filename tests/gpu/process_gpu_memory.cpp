#include "process_gpu_memory.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <unistd.h>

#include <vector>

namespace strider::testing {
namespace {

// The ABI of nvml.h (CUDA 11+): nvmlProcessInfo_t as taken by the _v2 and _v3 process queries.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kInsufficientSize = 7;
constexpr unsigned long long kValueNotAvailable = ~0ULL;
struct ProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

}  // namespace

struct ProcessGpuMemory::Api {
  void* lib = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*by_pci_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned int*, ProcessInfo*) = nullptr;
};

ProcessGpuMemory::ProcessGpuMemory() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    why_ = "libnvidia-ml.so.1 not found";
    return;
  }
  api_ = new Api;
  api_->lib = lib;
  auto sym = [lib](const char* name) { return dlsym(lib, name); };
  api_->init = reinterpret_cast<decltype(api_->init)>(sym("nvmlInit_v2"));
  api_->shutdown = reinterpret_cast<decltype(api_->shutdown)>(sym("nvmlShutdown"));
  api_->by_pci_bus_id =
      reinterpret_cast<decltype(api_->by_pci_bus_id)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
  void* processes = sym("nvmlDeviceGetComputeRunningProcesses_v3");
  if (processes == nullptr) processes = sym("nvmlDeviceGetComputeRunningProcesses_v2");
  api_->processes = reinterpret_cast<decltype(api_->processes)>(processes);
  if (!api_->init || !api_->shutdown || !api_->by_pci_bus_id || !api_->processes) {
    why_ = "libnvidia-ml lacks the per-process queries";
    return;
  }
  if (api_->init() != kSuccess) {
    why_ = "nvmlInit failed";
    api_->init = nullptr;
    return;
  }
  // NVML numbers devices its own way; the PCI bus id names the device CUDA uses here.
  int device = 0;
  char bus_id[64] = {};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess ||
      api_->by_pci_bus_id(bus_id, &device_) != kSuccess) {
    why_ = "NVML has no handle for this CUDA device";
    device_ = nullptr;
  }
}

ProcessGpuMemory::~ProcessGpuMemory() {
  if (api_ == nullptr) return;
  if (api_->init != nullptr && api_->shutdown != nullptr) api_->shutdown();
  dlclose(api_->lib);
  delete api_;
}

std::optional<std::uint64_t> ProcessGpuMemory::bytes() {
  if (device_ == nullptr) return std::nullopt;
  std::vector<ProcessInfo> infos(64);
  auto count = static_cast<unsigned int>(infos.size());
  nvmlReturn_t rc = api_->processes(device_, &count, infos.data());
  if (rc == kInsufficientSize) {  // other processes came and went: ask again with room
    infos.resize(count + 64);
    count = static_cast<unsigned int>(infos.size());
    rc = api_->processes(device_, &count, infos.data());
  }
  if (rc != kSuccess) {
    why_ = "nvmlDeviceGetComputeRunningProcesses failed (" + std::to_string(rc) + ")";
    return std::nullopt;
  }
  const auto me = static_cast<unsigned int>(getpid());
  for (unsigned int i = 0; i < count; ++i) {
    if (infos[i].pid != me) continue;
    if (infos[i].used_gpu_memory == kValueNotAvailable) {
      why_ = "NVML gives no per-process memory figure here";
      return std::nullopt;
    }
    return infos[i].used_gpu_memory;
  }
  why_ = "this PID is not among NVML's processes (a PID namespace?)";
  return std::nullopt;
}

}  // namespace strider::testing
