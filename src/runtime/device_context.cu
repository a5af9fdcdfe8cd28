#include <cuda.h>

#include <array>
#include <atomic>
#include <memory>

#include "runtime/device_context.hpp"

namespace strider::runtime {
namespace {

constexpr int kMaxDevices = 64;
std::mutex g_contexts_mutex;  // taken only to create a context
std::array<std::atomic<DeviceContext*>, kMaxDevices> g_contexts{};

}  // namespace

std::string cuda_error_text(const char* what, cudaError_t rc) {
  return std::string(what) + ": " + cudaGetErrorName(rc) + " (" + cudaGetErrorString(rc) + ")";
}

void* driver_function(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return fn;
}

cudaError_t query_stream(cudaStream_t stream) {
  using StreamQuery = CUresult (*)(CUstream);
  static const auto driver_query = driver_entry_point<StreamQuery>("cuStreamQuery");
  if (driver_query) {
    const CUresult rc = driver_query(stream);
    if (rc == CUDA_SUCCESS) return cudaSuccess;
    if (rc == CUDA_ERROR_NOT_READY) return cudaErrorNotReady;
  }
  // A failure (or no driver entry point): the runtime names it as the runtime does.
  const cudaError_t rc = cudaStreamQuery(stream);
  if (rc == cudaErrorNotReady) (void)cudaGetLastError();
  return rc;
}

DeviceContext* DeviceContext::get(int device, std::string& error) {
  if (device < 0 || device >= kMaxDevices) {
    error = "no such device " + std::to_string(device);
    return nullptr;
  }
  // The hot path: one atomic load. Contexts live until the process ends.
  if (DeviceContext* ctx = g_contexts[device].load(std::memory_order_acquire)) return ctx;
  std::lock_guard lock(g_contexts_mutex);
  if (DeviceContext* ctx = g_contexts[device].load(std::memory_order_acquire)) return ctx;
  DeviceGuard guard(device);
  if (!guard.ok()) {
    error = "cannot select device " + std::to_string(device);
    return nullptr;
  }
  std::unique_ptr<DeviceContext> ctx(new DeviceContext);
  ctx->device_ = device;
  // A blocking stream: its work waits for what the application queued on the legacy default
  // stream, e.g. a cudaMemcpy from pageable memory whose DMA may still be in flight when it
  // returns. Applications on their own non-blocking streams synchronize before the MPI call.
  cudaError_t rc = cudaStreamCreateWithFlags(&ctx->stream_, cudaStreamDefault);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    error = cuda_error_text("cudaStreamCreateWithFlags", rc);
    return nullptr;
  }
  rc = cudaEventCreateWithFlags(&ctx->done_, cudaEventDisableTiming);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    error = cuda_error_text("cudaEventCreateWithFlags", rc);
    cudaStreamDestroy(ctx->stream_);
    return nullptr;
  }
  rc = cudaDeviceGetAttribute(&ctx->multiprocessors_, cudaDevAttrMultiProcessorCount, device);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    ctx->multiprocessors_ = 1;
  }
  ctx->create_signal();
  g_contexts[device].store(ctx.get(), std::memory_order_release);
  return ctx.release();
}

cudaError_t DeviceContext::wait() {
  const cudaError_t rc = cudaEventRecord(done_, stream_);
  return rc != cudaSuccess ? rc : cudaEventSynchronize(done_);
}

void DeviceContext::create_signal() {
  void* host = nullptr;
  void* blocks = nullptr;
  void* device = nullptr;
  if (cudaHostAlloc(&host, sizeof(unsigned), cudaHostAllocMapped) == cudaSuccess &&
      cudaHostGetDevicePointer(&device, host, 0) == cudaSuccess &&
      cudaMalloc(&blocks, sizeof(unsigned)) == cudaSuccess &&
      cudaMemset(blocks, 0, sizeof(unsigned)) == cudaSuccess) {
    *static_cast<volatile unsigned*>(host) = 0;
    signal_flag_host_ = static_cast<unsigned*>(host);
    signal_flag_device_ = static_cast<unsigned*>(device);
    signal_blocks_ = static_cast<unsigned*>(blocks);
    return;
  }
  (void)cudaGetLastError();  // without it every call waits on the event instead
  if (blocks) cudaFree(blocks);
  if (host) cudaFreeHost(host);
}

cudaError_t DeviceContext::wait_signal(unsigned seq) {
  const volatile unsigned* flag = signal_flag_host_;
  constexpr unsigned kSpinsPerStreamCheck = 4096;
  for (unsigned spins = 1;; ++spins) {
    if (*flag == seq) return cudaSuccess;
    if (spins % kSpinsPerStreamCheck != 0) continue;
    const cudaError_t rc = query_stream(stream_);
    if (rc != cudaErrorNotReady) return rc;  // done (success) or failed
  }
}

void* DeviceContext::scratch(std::size_t bytes) {
  if (bytes <= scratch_bytes_) return scratch_;
  if (scratch_ != nullptr) {
    cudaStreamSynchronize(stream_);  // the old buffer may still be read by queued work
    cudaFree(scratch_);
    scratch_ = nullptr;
    scratch_bytes_ = 0;
  }
  // Grow geometrically so a sequence of growing messages allocates O(log n) times.
  std::size_t want = 1 << 20;
  while (want < bytes) want *= 2;
  if (cudaMalloc(&scratch_, want) != cudaSuccess) {
    (void)cudaGetLastError();
    scratch_ = nullptr;
    if (cudaMalloc(&scratch_, bytes) != cudaSuccess) {
      (void)cudaGetLastError();
      scratch_ = nullptr;
      return nullptr;
    }
    want = bytes;
  }
  scratch_bytes_ = want;
  return scratch_;
}

DeviceContext::JobMemory DeviceContext::job_memory(std::size_t bytes) {
  if (bytes <= jobs_.bytes) return jobs_;
  if (jobs_.bytes != 0) {
    cudaStreamSynchronize(stream_);  // queued work may still read the old table
    cudaFreeHost(jobs_.host);
    cudaFree(jobs_.device);
    jobs_ = {};
  }
  std::size_t want = 64 << 10;  // a halo's 208 jobs fit
  while (want < bytes) want *= 2;
  void* host = nullptr;
  void* device = nullptr;
  if (cudaMallocHost(&host, want) != cudaSuccess || cudaMalloc(&device, want) != cudaSuccess) {
    (void)cudaGetLastError();
    if (host) cudaFreeHost(host);
    return {};
  }
  jobs_ = {static_cast<std::byte*>(host), static_cast<std::byte*>(device), want};
  return jobs_;
}

DeviceGuard::DeviceGuard(int device) {
  if (cudaGetDevice(&previous_) != cudaSuccess) {
    (void)cudaGetLastError();
    previous_ = -1;
  }
  if (previous_ == device) {
    ok_ = true;
    return;
  }
  ok_ = cudaSetDevice(device) == cudaSuccess;
  switched_ = ok_ && previous_ >= 0;
  if (!ok_) (void)cudaGetLastError();
}

DeviceGuard::~DeviceGuard() {
  if (switched_) cudaSetDevice(previous_);
}

}  // namespace strider::runtime
