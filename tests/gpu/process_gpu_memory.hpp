// The GPU memory this process holds on its current device, as NVML reports it per process.
// Device-wide free memory cannot tell a leak from other processes (tests run beside each other
// under `ctest -j`); NVML's per-PID figure can. NVML is loaded with dlopen, so nothing links it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace strider::testing {

class ProcessGpuMemory {
 public:
  ProcessGpuMemory();  // loads NVML and finds the current CUDA device in it
  ~ProcessGpuMemory();
  ProcessGpuMemory(const ProcessGpuMemory&) = delete;
  ProcessGpuMemory& operator=(const ProcessGpuMemory&) = delete;

  // Bytes this PID holds on the device; empty when NVML cannot say (see why()).
  std::optional<std::uint64_t> bytes();
  // Why bytes() is empty: no libnvidia-ml, no handle for the device, PID not listed (a PID
  // namespace), or no per-process figure (some virtualized or MIG setups).
  const std::string& why() const { return why_; }

 private:
  struct Api;
  Api* api_ = nullptr;
  void* device_ = nullptr;
  std::string why_;
};

}  // namespace strider::testing
