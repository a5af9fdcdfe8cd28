// What classifying a buffer costs: the runtime's cudaPointerGetAttributes against the driver's
// cuPointerGetAttribute (memory type only, reached through cudaGetDriverEntryPointByVersion so
// nothing links libcuda), on pageable host, pinned host and device pointers. Median over batches.
// Usage: strider_bench_classify [--iters N]
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using PointerGetAttribute = CUresult (*)(void*, CUpointer_attribute, CUdeviceptr);
using PrimaryCtxGetState = CUresult (*)(CUdevice, unsigned int*, int*);

template <class Fn>
Fn entry_point(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    return nullptr;
  }
  return reinterpret_cast<Fn>(fn);
}

// Whether device 0's primary context is active (-1: cannot tell).
int primary_active(PrimaryCtxGetState state) {
  unsigned int flags = 0;
  int active = 0;
  if (!state || state(0, &flags, &active) != CUDA_SUCCESS) return -1;
  return active;
}

template <class F>
double ns_per_call(F&& f, int iters) {
  std::vector<double> batches;
  for (int b = 0; b < 21; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) f();
    const auto t1 = std::chrono::steady_clock::now();
    batches.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / iters);
  }
  std::nth_element(batches.begin(), batches.begin() + 10, batches.end());
  return batches[10];
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 100000;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) iters = std::atoi(argv[++i]);
    if (!std::strcmp(argv[i], "--help")) {
      std::printf("usage: strider_bench_classify [--iters N]\n");
      return 0;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: nothing measured\n");
    return 0;
  }
  void* pageable = std::malloc(1 << 20);
  // Does classifying a host pointer create a CUDA context in a process that has none? (A
  // host-only MPI program on a GPU node must not get one per rank.)
  const auto state = entry_point<PrimaryCtxGetState>("cuDevicePrimaryCtxGetState");
  const int before = primary_active(state);
  {
    cudaPointerAttributes a{};
    cudaPointerGetAttributes(&a, pageable);
    (void)cudaGetLastError();
  }
  std::printf("primary context active: before any query %d, after cudaPointerGetAttributes %d\n",
              before, primary_active(state));
  if (state) {
    const double ns = ns_per_call([&] { (void)primary_active(state); }, iters);
    std::printf("cuDevicePrimaryCtxGetState: %.1f ns\n", ns);
  }
  void* pinned = nullptr;
  void* device = nullptr;
  if (cudaMallocHost(&pinned, 1 << 20) != cudaSuccess ||
      cudaMalloc(&device, 1 << 20) != cudaSuccess) {
    std::printf("allocation failed\n");
    return 1;
  }
  const auto get = entry_point<PointerGetAttribute>("cuPointerGetAttribute");
  std::printf("%-10s %24s %26s\n", "memory", "cudaPointerGetAttributes",
              "cuPointerGetAttribute(type)");
  const struct {
    const char* name;
    void* p;
  } cases[] = {{"pageable", pageable}, {"pinned", pinned}, {"device", device}};
  for (const auto& c : cases) {
    volatile int sink = 0;
    const double runtime = ns_per_call(
        [&] {
          cudaPointerAttributes a{};
          cudaPointerGetAttributes(&a, c.p);
          sink = sink + a.type;
        },
        iters);
    double driver = -1;
    if (get) {
      driver = ns_per_call(
          [&] {
            unsigned int type = 0;
            if (get(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, reinterpret_cast<CUdeviceptr>(c.p)) !=
                CUDA_SUCCESS) {
              type = 0;
            }
            sink = sink + static_cast<int>(type);
          },
          iters);
    }
    (void)cudaGetLastError();
    std::printf("%-10s %21.1f ns %23.1f ns\n", c.name, runtime, driver);
  }
  return 0;
}
