// bench/gpu_handoff: why a small GPU message between two MPI processes that share one GPU costs
// far more per half round trip than one process's launch + sync. Hypothesis: without MPS the GPU
// time-slices between the two processes' contexts, and each hand-over of GPU work from one
// process to the other costs a context switch. Two ranks ping-pong a 0-byte message (rank 0
// starts; host wall clock around each round trip on rank 0, halved; warm-up discarded; median
// and p10/p90 over many reps), with before each send:
//   mpi:       nothing (the MPI floor);
//   one_side:  on rank 0 only, an empty kernel on its non-blocking stream + cudaStreamSynchronize
//              (one context does GPU work; rank 1 just bounces the message);
//   both:      on each rank, empty kernel + sync (GPU work alternates between the contexts);
//   both_copy: on each rank, a 1 KiB cudaMemcpyAsync device to device + sync (copy engine);
//   local:     rank 0 alone, back-to-back launch + sync, no MPI (rank 1 waits at a barrier);
//              per launch + sync, not halved.
// Also reports whether both ranks are on the same GPU (UUID and PCI address compared).
//   mpirun -n 2 strider_bench_gpu_handoff [--reps N] [--warmup N] [--csv PATH]
#include <cuda_runtime.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "../common/cuda_check.hpp"
#include "../common/mpi_check.hpp"

namespace {

constexpr int kTag = 11;
constexpr std::size_t kCopyBytes = 1024;

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

__global__ void empty_kernel() {}

struct Stats {
  std::string name;
  double median, p10, p90;
  int reps;
};

Stats summarize(const std::string& name, std::vector<double> t) {
  std::sort(t.begin(), t.end());
  const std::size_t n = t.size();
  return {name, t[n / 2], t[n / 10], t[std::min(n - 1, n * 9 / 10)], static_cast<int>(n)};
}

// Half round trips timed on rank 0; `work` runs before each of this rank's sends (may be empty).
std::vector<double> pingpong(int rank, int warmup, int reps, const std::function<void()>& work) {
  std::vector<double> t;
  t.reserve(static_cast<std::size_t>(reps));
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  for (int i = 0; i < warmup + reps; ++i) {
    if (rank == 0) {
      const double a = now_us();
      if (work) work();
      MPI_CHECK(MPI_Send(nullptr, 0, MPI_BYTE, 1, kTag, MPI_COMM_WORLD));
      MPI_CHECK(MPI_Recv(nullptr, 0, MPI_BYTE, 1, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      if (i >= warmup) t.push_back((now_us() - a) / 2);
    } else {
      MPI_CHECK(MPI_Recv(nullptr, 0, MPI_BYTE, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      if (work) work();
      MPI_CHECK(MPI_Send(nullptr, 0, MPI_BYTE, 0, kTag, MPI_COMM_WORLD));
    }
  }
  return t;
}

// What identifies a GPU across processes, exchanged as bytes.
struct GpuId {
  int device, domain, bus, dev;
  char uuid[16];
  char name[256];
};

int local_rank_of(int rank) {
  if (const char* env = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK")) return std::atoi(env);
  MPI_Comm node;
  int local = 0;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  MPI_CHECK(MPI_Comm_rank(node, &local));
  MPI_CHECK(MPI_Comm_free(&node));
  return local;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_CHECK(MPI_Init(&argc, &argv));
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int rank = 0, size = 0;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  int reps = 2000, warmup = 100;
  std::string csv_path;
  bool bad = size != 2;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      reps = std::max(11, std::atoi(argv[++i]));
    } else if (a == "--warmup" && i + 1 < argc) {
      warmup = std::max(0, std::atoi(argv[++i]));
    } else if (a == "--csv" && i + 1 < argc) {
      csv_path = argv[++i];
    } else {
      bad = true;
    }
  }
  if (bad) {
    if (rank == 0) {
      std::fprintf(stderr,
                   "usage: mpirun -n 2 %s [--reps N] [--warmup N] [--csv PATH]\n"
                   "Ping-pongs 0-byte messages between exactly 2 ranks with and without GPU\n"
                   "work before each send, to show the cost of handing the GPU over between\n"
                   "the two processes' contexts (see the header of gpu_handoff_bench.cu).\n",
                   argv[0]);
    }
    MPI_CHECK(MPI_Finalize());
    return 1;
  }

  int ndev = 0;
  CUDA_CHECK(cudaGetDeviceCount(&ndev));
  if (ndev < 1) {
    std::fprintf(stderr, "rank %d sees no GPU\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  GpuId me{};
  me.device = local_rank_of(rank) % ndev;
  CUDA_CHECK(cudaSetDevice(me.device));
  CUDA_CHECK(cudaFree(nullptr));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, me.device));
  me.domain = prop.pciDomainID;
  me.bus = prop.pciBusID;
  me.dev = prop.pciDeviceID;
  std::memcpy(me.uuid, prop.uuid.bytes, sizeof me.uuid);
  std::snprintf(me.name, sizeof me.name, "%s", prop.name);
  GpuId ids[2];
  MPI_CHECK(MPI_Allgather(&me, sizeof me, MPI_BYTE, ids, sizeof me, MPI_BYTE, MPI_COMM_WORLD));
  const bool same_gpu = std::memcmp(ids[0].uuid, ids[1].uuid, sizeof me.uuid) == 0 &&
                        ids[0].domain == ids[1].domain && ids[0].bus == ids[1].bus &&
                        ids[0].dev == ids[1].dev;

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  void *src = nullptr, *dst = nullptr;
  CUDA_CHECK(cudaMalloc(&src, kCopyBytes));
  CUDA_CHECK(cudaMalloc(&dst, kCopyBytes));
  CUDA_CHECK(cudaMemset(src, 1, kCopyBytes));
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::function<void()> launch_sync = [&] {
    empty_kernel<<<1, 32, 0, stream>>>();
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  const std::function<void()> copy_sync = [&] {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, kCopyBytes, cudaMemcpyDeviceToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  const std::function<void()> none;

  std::vector<Stats> rows;
  rows.push_back(summarize("mpi", pingpong(rank, warmup, reps, none)));
  rows.push_back(
      summarize("one_side", pingpong(rank, warmup, reps, rank == 0 ? launch_sync : none)));
  rows.push_back(summarize("both", pingpong(rank, warmup, reps, launch_sync)));
  rows.push_back(summarize("both_copy", pingpong(rank, warmup, reps, copy_sync)));
  std::vector<double> local;
  if (rank == 0) {
    for (int i = 0; i < warmup + reps; ++i) {
      const double a = now_us();
      launch_sync();
      if (i >= warmup) local.push_back(now_us() - a);
    }
  }
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) rows.push_back(summarize("local", local));

  if (rank == 0) {
    for (int r = 0; r < 2; ++r) {
      std::printf("rank %d: device %d, %s, PCI %04x:%02x:%02x\n", r, ids[r].device, ids[r].name,
                  ids[r].domain, ids[r].bus, ids[r].dev);
    }
    std::printf("same GPU: %s; reps %d, warm-up %d; us per half round trip (local: per call)\n",
                same_gpu ? "yes" : "no", reps, warmup);
    std::printf("  %-10s %10s %10s %10s\n", "case", "median", "p10", "p90");
    for (const Stats& s : rows) {
      std::printf("  %-10s %10.2f %10.2f %10.2f\n", s.name.c_str(), s.median, s.p10, s.p90);
    }
    // rows: 0 mpi, 1 one_side, 2 both, 3 both_copy, 4 local. one_side carries half a
    // launch + sync per half round trip and both a whole one, so the difference also holds
    // local / 2; the second line takes the MPI floor and a whole launch + sync off `both`.
    std::printf("context hand-over cost ≈ (both - one_side) per half round trip = %.2f µs\n",
                rows[2].median - rows[1].median);
    std::printf("  (both - mpi - local = %.2f µs; both_copy - mpi = %.2f µs)\n",
                rows[2].median - rows[0].median - rows[4].median, rows[3].median - rows[0].median);
    if (!csv_path.empty()) {
      FILE* csv = std::fopen(csv_path.c_str(), "w");
      if (!csv) {
        std::fprintf(stderr, "cannot write %s\n", csv_path.c_str());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      std::fprintf(csv, "case,same_gpu,median_us,p10_us,p90_us,reps\n");
      for (const Stats& s : rows) {
        std::fprintf(csv, "%s,%d,%.4f,%.4f,%.4f,%d\n", s.name.c_str(), same_gpu ? 1 : 0, s.median,
                     s.p10, s.p90, s.reps);
      }
      std::fclose(csv);
    }
  }
  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(dst));
  MPI_CHECK(MPI_Finalize());
  return 0;
}
