// Soak: 10^6 GPU point-to-point exchanges (2*10^5 when both ranks share a GPU;
// STRIDER_SOAK_ITERATIONS overrides) between two ranks,
// cycling through the methods and through message sizes of several pool size classes. After the
// warm-up, the pools must neither grow nor allocate, and the GPU memory this process holds (NVML's
// per-process figure, not the device's free memory, which other tests running beside this one
// change) must stay flat. The data of a message is checked at every sample.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "process_gpu_memory.hpp"

namespace strider::testing {
namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

struct Sample {
  long iteration;
  std::optional<std::uint64_t> gpu_bytes;  // this process's, on its device
  strider_stats stats;
};

// Whether both ranks run on the same GPU (same PCI bus id).
bool ranks_share_a_gpu() {
  int device = 0;
  char bus[32] = {};
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) {
    return false;
  }
  char all[2][32] = {};
  MPI_Allgather(bus, sizeof bus, MPI_CHAR, all, sizeof bus, MPI_CHAR, MPI_COMM_WORLD);
  return std::string(all[0]) == std::string(all[1]);
}

TEST(PoolSoak, MemoryStaysFlat) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  ASSERT_TRUE(strider_loaded()) << "run with libstrider preloaded";
  using SetMethod = int (*)(const char*);
  auto set_method = reinterpret_cast<SetMethod>(dlsym(RTLD_DEFAULT, "strider_set_method"));
  ASSERT_NE(set_method, nullptr);
  // Two ranks on one GPU time-slice it (about 0.55 ms an exchange on an H100 against 0.06 on
  // two H200s): 2*10^5 exchanges there keep the test inside its CTest timeout.
  const long iterations =
      env_long("STRIDER_SOAK_ITERATIONS", ranks_share_a_gpu() ? 200000 : 1000000);
  const long sample_every = std::max(1L, iterations / 10);
  const int me = world_rank(), peer = 1 - me;

  // Three vectors of doubles (blocks of 2, stride 3): 1.5 KiB, 48 KiB and 768 KiB packed.
  const int counts[] = {64, 2048, 32768};
  std::vector<MPI_Datatype> types;
  for (int c : counts) {
    MPI_Datatype t;
    MPI_Type_vector(c, 2, 3, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    types.push_back(t);
  }
  const std::size_t span = static_cast<std::size_t>(counts[2]) * 3 * sizeof(double);
  std::vector<double> host(span / sizeof(double));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = me * 1e7 + static_cast<double>(i);
  double *send = nullptr, *recv = nullptr;
  CUDA_OK(cudaMalloc(&send, span));
  CUDA_OK(cudaMalloc(&recv, span));
  CUDA_OK(cudaMemcpy(send, host.data(), span, cudaMemcpyHostToDevice));
  const char* methods[] = {"oneshot", "staged", "auto", "device"};
  ProcessGpuMemory gpu_memory;
  // STRIDER_SOAK_LEAK_BYTES: allocate (and keep) this much at every sample, to see the check fail.
  const long leak_bytes = env_long("STRIDER_SOAK_LEAK_BYTES", 0);
  std::vector<void*> leaked;

  std::vector<Sample> samples;
  for (long it = 1; it <= iterations; ++it) {
    // A new method every 1000 iterations; every 16th message is a larger class.
    set_method(methods[(it / 1000) % 4]);
    const int which = it % 64 == 0 ? 2 : it % 16 == 0 ? 1 : 0;
    const bool sample = it % sample_every == 0;
    if (sample) CUDA_OK(cudaMemset(recv, 0, span));
    MPI_Request r[2];
    MPI_Irecv(recv, 1, types[which], peer, 0, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(send, 1, types[which], peer, 0, MPI_COMM_WORLD, &r[1]);
    ASSERT_EQ(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), MPI_SUCCESS) << "iteration " << it;
    if (!sample) continue;
    std::vector<double> got(host.size());
    CUDA_OK(cudaMemcpy(got.data(), recv, span, cudaMemcpyDeviceToHost));
    long wrong = 0;
    for (int b = 0; b < counts[which]; ++b) {
      for (int k = 0; k < 3; ++k) {
        const std::size_t i = static_cast<std::size_t>(b) * 3 + k;
        const double want = k < 2 ? peer * 1e7 + static_cast<double>(i) : 0.0;
        wrong += got[i] != want;
      }
    }
    EXPECT_EQ(wrong, 0) << "iteration " << it;
    if (leak_bytes > 0 && !samples.empty()) {
      CUDA_OK(cudaMalloc(&leaked.emplace_back(), static_cast<std::size_t>(leak_bytes)));
    }
    samples.push_back({it, gpu_memory.bytes(), stats()});
  }
  if (!samples.empty() && !samples[0].gpu_bytes) {
    std::printf("rank %d: GPU memory of this process not checked: %s (pools still checked)\n", me,
                gpu_memory.why().c_str());
  }
  if (me == 0) {
    std::printf("%12s %16s %16s %16s %12s %14s\n", "iteration", "own GPU MiB", "pinned pool B",
                "device pool B", "allocations", "transfers");
  }
  for (const Sample& s : samples) {
    if (me == 0) {
      std::printf("%12ld %16.1f %16llu %16llu %12llu %14llu\n", s.iteration,
                  s.gpu_bytes ? *s.gpu_bytes / 1048576.0 : -1.0,
                  (unsigned long long)s.stats.pool_host_bytes,
                  (unsigned long long)s.stats.pool_device_bytes,
                  (unsigned long long)s.stats.pool_allocations,
                  (unsigned long long)(s.stats.transfers_oneshot + s.stats.transfers_staged +
                                       s.stats.transfers_device));
    }
  }
  ASSERT_GE(samples.size(), 2u);
  // Every method and size class has been used before the first sample: from there on, flat.
  for (std::size_t i = 1; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].stats.pool_host_bytes, samples[0].stats.pool_host_bytes);
    EXPECT_EQ(samples[i].stats.pool_device_bytes, samples[0].stats.pool_device_bytes);
    EXPECT_EQ(samples[i].stats.pool_allocations, samples[0].stats.pool_allocations);
    EXPECT_EQ(samples[i].stats.requests_pending, 0u);
    // The GPU memory this process holds stays within 2 MiB of the first sample's.
    if (!samples[0].gpu_bytes) continue;
    ASSERT_TRUE(samples[i].gpu_bytes) << "NVML stopped answering: " << gpu_memory.why();
    const auto growth = static_cast<long long>(*samples[i].gpu_bytes) -
                        static_cast<long long>(*samples[0].gpu_bytes);
    EXPECT_LE(growth, 2LL << 20) << "rank " << me << ": this process's GPU memory grew by "
                                 << growth << " bytes by iteration " << samples[i].iteration;
  }
  for (void* p : leaked) cudaFree(p);
  for (MPI_Datatype& t : types) MPI_Type_free(&t);
  cudaFree(send);
  cudaFree(recv);
}

}  // namespace
}  // namespace strider::testing
