// GPU placement of the point-to-point and collective tests' buffers: device memory
// (cudaMalloc), chosen by STRIDER_TEST_PLACEMENT: "device" (default) on every rank, "mixed" on
// even ranks only (odd ranks keep host memory), so messages cross between host and device in
// both directions, "managed" (cudaMallocManaged) or "async" (cudaMallocAsync, stream-ordered
// pool memory, which CUDA IPC cannot export: the same-node paths must never export user memory)
// on every rank.
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "p2p_buffers.hpp"

namespace strider::testing {
namespace {

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
  }
}

class DevicePlacement final : public Placement {
 public:
  const char* name() const override { return "device"; }
  void* alloc(std::size_t bytes) override {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes ? bytes : 1), "cudaMalloc");
    return p;
  }
  void free(void* p) override { cudaFree(p); }
  void upload(void* dst, const void* src, std::size_t n) override {
    check(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice), "cudaMemcpy to device");
  }
  void download(void* dst, const void* src, std::size_t n) override {
    check(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost), "cudaMemcpy to host");
  }
};

class ManagedPlacement final : public Placement {
 public:
  const char* name() const override { return "managed"; }
  void* alloc(std::size_t bytes) override {
    void* p = nullptr;
    check(cudaMallocManaged(&p, bytes ? bytes : 1), "cudaMallocManaged");
    return p;
  }
  void free(void* p) override { cudaFree(p); }
  void upload(void* dst, const void* src, std::size_t n) override {
    check(cudaMemcpy(dst, src, n, cudaMemcpyDefault), "cudaMemcpy to managed memory");
  }
  void download(void* dst, const void* src, std::size_t n) override {
    check(cudaMemcpy(dst, src, n, cudaMemcpyDefault), "cudaMemcpy from managed memory");
  }
};

// Pool memory from cudaMallocAsync on the legacy stream, ready before it is handed out.
class AsyncPlacement final : public Placement {
 public:
  const char* name() const override { return "async"; }
  void* alloc(std::size_t bytes) override {
    void* p = nullptr;
    check(cudaMallocAsync(&p, bytes ? bytes : 1, nullptr), "cudaMallocAsync");
    check(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize");
    return p;
  }
  void free(void* p) override {
    cudaFreeAsync(p, nullptr);
    cudaStreamSynchronize(nullptr);
  }
  void upload(void* dst, const void* src, std::size_t n) override {
    check(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice), "cudaMemcpy to pool memory");
  }
  void download(void* dst, const void* src, std::size_t n) override {
    check(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost), "cudaMemcpy from pool memory");
  }
};

bool placement_is(const char* name) {
  const char* v = std::getenv("STRIDER_TEST_PLACEMENT");
  return v != nullptr && std::strcmp(v, name) == 0;
}

bool async_pool() { return placement_is("async"); }

bool managed() {
  const char* v = std::getenv("STRIDER_TEST_PLACEMENT");
  return v != nullptr && std::strcmp(v, "managed") == 0;
}

bool mixed() {
  const char* v = std::getenv("STRIDER_TEST_PLACEMENT");
  if (v == nullptr || std::strcmp(v, "device") == 0 || managed() || async_pool()) return false;
  if (std::strcmp(v, "mixed") != 0) {
    std::fprintf(stderr,
                 "STRIDER_TEST_PLACEMENT=%s unknown (device|mixed|managed|async): using device\n",
                 v);
    return false;
  }
  return true;
}

bool device_here() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return !mixed() || rank % 2 == 0;
}

}  // namespace

Placement& placement(Role) {
  static ManagedPlacement managed_memory;
  if (managed()) return managed_memory;
  static AsyncPlacement pool_memory;
  if (async_pool()) return pool_memory;
  static DevicePlacement device;
  static const bool on_device = device_here();
  if (on_device) return device;
  return host_placement();
}

const char* placement_summary() {
  if (managed()) return "managed memory on every rank";
  if (async_pool()) return "cudaMallocAsync pool memory on every rank";
  if (!mixed()) return "device memory on every rank";
  return device_here() ? "mixed: device memory on this (even) rank, host memory on odd ranks"
                       : "mixed: host memory on this (odd) rank, device memory on even ranks";
}

}  // namespace strider::testing

namespace strider::testing {

bool all_ranks_on_one_gpu() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  char mine[sizeof prop.uuid.bytes];
  std::memcpy(mine, prop.uuid.bytes, sizeof mine);
  char first[sizeof mine];
  std::memcpy(first, mine, sizeof mine);
  MPI_Bcast(first, sizeof first, MPI_BYTE, 0, MPI_COMM_WORLD);
  int same = std::memcmp(mine, first, sizeof mine) == 0 ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all != 0;
}

}  // namespace strider::testing
