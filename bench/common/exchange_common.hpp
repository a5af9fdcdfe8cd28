// Shared by bench/halo and bench/transpose: buffers that live on the GPU or (--memory host) in
// host memory, the machine numbers their floors use, option lists, order statistics over ranks
// and the CSV row both write. Header only; compiled by nvcc into each benchmark.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "cuda_check.hpp"

namespace strider::bench {

// Where the benchmark's arrays live. Host: plain host memory and CPU loops in place of the
// kernels, no CUDA call at all, so that the program runs (and verifies every form) on a machine
// without a GPU, with or without Strider preloaded.
enum class Memory { Device, Host };

inline double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

inline std::string today() {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  return date;
}

// Device memory, or 256-byte aligned host memory in host mode.
inline void* buffer_alloc(Memory mem, std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 256);
  void* p = nullptr;
  if (mem == Memory::Device) {
    CUDA_CHECK(cudaMalloc(&p, bytes));
  } else {
    p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (p == nullptr) {
      std::fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  return p;
}

inline void buffer_free(Memory mem, void* p) {
  if (mem == Memory::Device) {
    CUDA_CHECK(cudaFree(p));
  } else {
    std::free(p);
  }
}

// Pinned host memory (cudaMallocHost), or plain host memory in host mode.
inline void* staging_alloc(Memory mem, std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 256);
  if (mem == Memory::Host) return buffer_alloc(mem, bytes);
  void* p = nullptr;
  CUDA_CHECK(cudaMallocHost(&p, bytes));
  return p;
}

inline void staging_free(Memory mem, void* p) {
  if (mem == Memory::Host) {
    std::free(p);
  } else {
    CUDA_CHECK(cudaFreeHost(p));
  }
}

// Copy between any two of the benchmark's buffers (cudaMemcpy with cudaMemcpyDefault, or
// memcpy in host mode), complete on return.
inline void copy_sync(Memory mem, void* dst, const void* src, std::size_t bytes) {
  if (mem == Memory::Host) {
    std::memcpy(dst, src, bytes);
  } else {
    CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
  }
}

struct Summary {
  double median = 0, p10 = 0, p90 = 0;
};

inline Summary summarize(std::vector<double> v) {
  Summary s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto at = [&v](double q) {
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
  };
  s.median = at(0.5);
  s.p10 = at(0.1);
  s.p90 = at(0.9);
  return s;
}

// Per-sample slowest rank: the element-wise maximum over the ranks of `mine`, on rank 0.
inline std::vector<double> slowest_rank(const std::vector<double>& mine) {
  std::vector<double> out(mine.size());
  MPI_Reduce(mine.data(), out.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX, 0,
             MPI_COMM_WORLD);
  return out;
}

inline double median_of(const std::function<void()>& f, int reps) {
  f();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const double a = now_us();
    f();
    t.push_back(now_us() - a);
  }
  return summarize(t).median;
}

static __global__ void empty_kernel() {}

// The primitives the floors are made of, measured once per run on rank 0 (then broadcast).
// Device: a 256 MiB device-to-device copy (bytes read + written per second: the rate a pack
// or unpack streams through HBM), launch + synchronize of an empty kernel. Host mode: the same
// copy with memcpy; no launches.
struct Machine {
  double copy_bw = 0;    // bytes/s, read + write
  double launch_us = 0;  // launch + sync of an empty kernel (0 in host mode)
};

inline Machine measure_machine(Memory mem) {
  Machine m;
  const std::size_t bytes = mem == Memory::Device ? std::size_t{256} << 20 : std::size_t{64} << 20;
  void* a = buffer_alloc(mem, bytes);
  void* b = buffer_alloc(mem, bytes);
  if (mem == Memory::Device) {
    CUDA_CHECK(cudaMemset(a, 1, bytes));
    CUDA_CHECK(cudaMemset(b, 2, bytes));
  } else {
    std::memset(a, 1, bytes);
    std::memset(b, 2, bytes);
  }
  const double t = median_of(
      [&] {
        copy_sync(mem, b, a, bytes);
        if (mem == Memory::Device) CUDA_CHECK(cudaDeviceSynchronize());
      },
      10);
  m.copy_bw = 2.0 * static_cast<double>(bytes) / (t * 1e-6);
  if (mem == Memory::Device) {
    m.launch_us = median_of(
        [] {
          empty_kernel<<<1, 32>>>();
          CUDA_CHECK(cudaGetLastError());
          CUDA_CHECK(cudaDeviceSynchronize());
        },
        200);
  }
  buffer_free(mem, a);
  buffer_free(mem, b);
  return m;
}

// Median time of one `bytes` copy device -> pinned host (d2h) and back (h2d), in us, measured
// with the given buffers (0, 0 in host mode: nothing crosses a bus there).
inline void measure_bus_us(Memory mem, void* dev, void* pinned, std::size_t bytes, double& d2h,
                           double& h2d) {
  d2h = h2d = 0;
  if (mem == Memory::Host || bytes == 0) return;
  d2h = median_of([&] { CUDA_CHECK(cudaMemcpy(pinned, dev, bytes, cudaMemcpyDeviceToHost)); }, 10);
  h2d = median_of([&] { CUDA_CHECK(cudaMemcpy(dev, pinned, bytes, cudaMemcpyHostToDevice)); }, 10);
}

// Rank 0 measures, every rank gets the numbers.
inline void bcast_doubles(double* v, int n) { MPI_Bcast(v, n, MPI_DOUBLE, 0, MPI_COMM_WORLD); }

// "64,128" or "64 128" (one or more following argv words) appended to `out`; false on a word
// that is not a whole number in [lo, hi]. `i` is left on the last word consumed.
inline bool parse_int_list(int argc, char** argv, int& i, int lo, int hi, std::vector<int>& out) {
  bool any = false;
  while (i + 1 < argc && std::strncmp(argv[i + 1], "--", 2) != 0) {
    std::string word = argv[++i];
    std::size_t at = 0;
    while (at <= word.size()) {
      const std::size_t comma = std::min(word.find(',', at), word.size());
      const std::string item = word.substr(at, comma - at);
      at = comma + 1;
      if (item.empty()) continue;
      char* end = nullptr;
      const long v = std::strtol(item.c_str(), &end, 10);
      if (*end != '\0' || v < lo || v > hi) return false;
      out.push_back(static_cast<int>(v));
      any = true;
    }
  }
  return any;
}

// One CSV row of the common format:
// date,device,mpi,ranks,n,form,phase,median_us,p10_us,p90_us,bytes_per_exchange,floor_us,
// ratio_to_floor,ratio_to_expert, then the benchmark's own trailing columns. A floor or expert
// time <= 0 leaves its ratio (and the floor) empty.
constexpr const char* kCsvHeader =
    "date,device,mpi,ranks,n,form,phase,median_us,p10_us,p90_us,bytes_per_exchange,floor_us,"
    "ratio_to_floor,ratio_to_expert";

inline void csv_row(FILE* f, const std::string& date, const std::string& device, const char* mpi,
                    int ranks, int n, const std::string& form, const std::string& phase,
                    const Summary& s, long long bytes, double floor_us, double expert_us,
                    const std::string& extra) {
  char fl[32] = "", rf[32] = "", re[32] = "";
  if (floor_us > 0) {
    std::snprintf(fl, sizeof fl, "%.3f", floor_us);
    std::snprintf(rf, sizeof rf, "%.3f", s.median / floor_us);
  }
  if (expert_us > 0) std::snprintf(re, sizeof re, "%.3f", s.median / expert_us);
  std::fprintf(f, "%s,%s,%s,%d,%d,%s,%s,%.3f,%.3f,%.3f,%lld,%s,%s,%s,%s\n", date.c_str(),
               device.c_str(), mpi, ranks, n, form.c_str(), phase.c_str(), s.median, s.p10, s.p90,
               bytes, fl, rf, re, extra.c_str());
  std::fflush(f);
}

// The device's name for the CSV (commas would break it), or "host" in host mode.
inline std::string device_label(Memory mem, int device) {
  if (mem == Memory::Host) return "host";
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::string name = prop.name;
  std::replace(name.begin(), name.end(), ',', ' ');
  return name;
}

// Picks local rank % GPUs (GPU 0 on every rank with `first_gpu`); false (on every rank alike)
// if some rank sees no GPU, and then no device is set.
inline bool select_gpu(int& device, bool first_gpu = false) {
  MPI_Comm node;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int local_rank = 0;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  int ndev = 0;
  int have_gpu = cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &have_gpu, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!have_gpu) return false;
  device = first_gpu ? 0 : local_rank % ndev;
  CUDA_CHECK(cudaSetDevice(device));
  CUDA_CHECK(cudaFree(nullptr));
  return true;
}

}  // namespace strider::bench
