// Per-GPU resources, created lazily on first use (applications pick their device after
// MPI_Init): a stream ordered after the legacy default stream, a growable scratch buffer and
// the device's properties.
// CUDA-only header.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <mutex>
#include <string>

namespace strider::runtime {

class DeviceContext {
 public:
  // The context of `device`, or nullptr (with `error` set) if its stream cannot be created.
  static DeviceContext* get(int device, std::string& error);

  // Serializes the users of the stream and the scratch buffer.
  std::mutex& mutex() { return mutex_; }
  cudaStream_t stream() const { return stream_; }
  // Waits until the stream's queued work is done. An event recorded on the stream and waited
  // for spinning (the event has no BlockingSync flag, whatever the application set for the
  // device): bench/call_cost measured it the fastest way to wait, and blocking sync 4-5 us
  // slower. Call with mutex() held.
  cudaError_t wait();

  // Kernel-written completion (engine::cuda::Completion): a counter of finished blocks in
  // device memory, a flag in mapped pinned memory, and the value the next signal writes. Null
  // when the memory could not be had (then wait() serves). Call with mutex() held.
  unsigned* signal_blocks() const { return signal_blocks_; }
  unsigned* signal_flag() const { return signal_flag_device_; }
  unsigned next_signal() { return ++signal_seq_; }
  // Spins until the flag holds `seq`. Checks the stream now and then, so a kernel that failed
  // (and never signals) ends the wait with its error instead of a hang; a stream found idle
  // ends it too.
  cudaError_t wait_signal(unsigned seq);
  int device() const { return device_; }
  int multiprocessors() const { return multiprocessors_; }

  // A device buffer of at least `bytes`, reused across calls; nullptr when the device is out of
  // memory (the caller falls back), the error cleared. Call with mutex() held.
  void* scratch(std::size_t bytes);

  // Memory for a batched launch's job table: pinned host memory the table is written into and
  // device memory it is copied to, `bytes` each, reused across calls (the previous call must
  // have waited for its work). Null pointers when either cannot be had, the error cleared. Call
  // with mutex() held.
  struct JobMemory {
    std::byte* host = nullptr;
    std::byte* device = nullptr;
    std::size_t bytes = 0;
  };
  JobMemory job_memory(std::size_t bytes);

 private:
  DeviceContext() = default;
  std::mutex mutex_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t done_ = nullptr;
  unsigned* signal_blocks_ = nullptr;
  unsigned* signal_flag_host_ = nullptr;
  unsigned* signal_flag_device_ = nullptr;
  unsigned signal_seq_ = 0;
  void create_signal();
  int device_ = -1;
  int multiprocessors_ = 1;
  void* scratch_ = nullptr;
  std::size_t scratch_bytes_ = 0;
  JobMemory jobs_;
};

// Makes `device` current for the guard's lifetime and restores the caller's device after.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
  bool ok() const { return ok_; }

 private:
  int previous_ = -1;
  bool ok_ = false;
  bool switched_ = false;
};

// "what: cudaErrorX (description)" for logs and error messages.
std::string cuda_error_text(const char* what, cudaError_t rc);

// Whether `stream`'s queued work is done (cudaSuccess), not yet (cudaErrorNotReady), or failed
// (its error), without waiting. Asks the driver first: the runtime's cudaStreamQuery records
// cudaErrorNotReady as the last error, which the application's next cudaGetLastError() would
// see as Strider's leftover. The current device must be the stream's.
cudaError_t query_stream(cudaStream_t stream);

// A CUDA driver function reached through the runtime (so libstrider does not link libcuda,
// which machines without a GPU driver lack): null when the driver lacks it.
void* driver_function(const char* name);
template <class Fn>
Fn driver_entry_point(const char* name) {
  return reinterpret_cast<Fn>(driver_function(name));
}

}  // namespace strider::runtime
