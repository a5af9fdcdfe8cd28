// bench/pingpong: two ranks ping-pong TEMPI's 2D objects held in GPU memory (a vector of
// `block`-byte blocks 512 bytes apart; 1 KiB, 1 MiB and 4 MiB packed) with plain MPI_Send /
// MPI_Recv of the committed vector type. Strider, preloaded, serves those calls under each of
// its transfer methods; next to it, measured in the same run:
//   floor (a):    the same number of packed bytes ping-ponged contiguously between pinned host
//                 buffers (what the MPI's wire costs at best);
//   pack / unpack floors of the object: bench/pack's model on this GPU;
//   baseline (b): what a user writes without Strider: cudaMemcpy2DAsync pack into a device
//                 buffer, copy to pinned host memory, MPI_Send; MPI_Recv, copy to the device,
//                 cudaMemcpy2DAsync unpack;
//   mpi_alone:    where the MPI is CUDA-aware, the same MPI_Send / MPI_Recv of the type on the
//                 device buffers with Strider bypassed (PMPI_*), objects of at most 16384 blocks.
// Time: host wall clock around each round trip on rank 0, halved; median and p10/p90 over many
// round trips after warm-up. Both receivers verify every case, before and after the timed
// round trips. Writes CSV (one row per object and method) and a table on stdout.
#include <cuda_runtime.h>
#include <dlfcn.h>
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

#include "../common/cuda_check.hpp"
#include "../common/mpi_name.hpp"
#include "../common/stats_diff.hpp"
#include "strider/strider.h"

namespace {

using strider::bench::mpi_name;

constexpr std::int64_t kStride = 512;  // TEMPI's 2D objects: blocks 512 bytes apart
constexpr std::int64_t kGuard = 4096;  // bytes past each object that must stay untouched
constexpr int kTag = 7;
constexpr std::int64_t kAloneBlocks = 16384;  // the MPI alone: most blocks a case may have
constexpr const char* kMethods[] = {"auto", "oneshot", "staged", "device"};

struct Options {
  bool quick = false;
  std::string out = "pingpong.csv";
  int iters = 0;         // most timed round trips per case
  double budget_ms = 0;  // timed round trips stop after this much time (min_iters at least)
  int min_iters = 0;
  int warmup = 0;
};

void usage(const char* argv0) {
  std::printf(
      "usage: %s [--quick] [--iters N] [--budget-ms MS] [--out FILE]\n"
      "Two ranks (mpirun -n 2), one GPU each (local rank %% GPUs) or both on one GPU. Ping-pongs\n"
      "2D objects (1 KiB / 1 MiB / 4 MiB packed; blocks of 1-512 B, stride 512 B) in GPU memory\n"
      "with MPI_Send/MPI_Recv of an MPI_Type_vector. With LD_PRELOAD=libstrider.so: one row per\n"
      "Strider method (auto, oneshot, staged, device); without it only baseline (b) rows, as an\n"
      "MPI that is not CUDA-aware cannot take the device pointers. Reports half round-trip\n"
      "times against floor (a) (contiguous host ping-pong of the packed bytes), the pack and\n"
      "unpack floors (bench/pack's model) and baseline (b) (cudaMemcpy2DAsync + host copy).\n"
      "  --quick        blocks 1, 8, 64, 512 B only; at most 20 round trips, 20 ms per case\n"
      "  --iters N      at most N timed round trips per case (default 1000; --quick: 20)\n"
      "  --budget-ms MS stop a case's timed round trips after MS ms, but never below\n"
      "                 min(N, 10) (default 250; --quick: 20)\n"
      "  --out FILE     CSV output (default pingpong.csv), written by rank 0\n"
      "Exit status: 0 done (or no GPU: nothing measured), 1 a verification failure or a CUDA\n"
      "error, 2 a usage error (bad option, not exactly 2 ranks, CSV not writable).\n",
      argv0);
}

// Parses a whole decimal number > 0 (at most `max`) into `out`.
bool parse_positive(const char* text, double max, double& out) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v > 0) || v > max) return false;
  out = v;
  return true;
}

// 0: run; 1: --help printed; 2: usage error printed.
int parse_args(int argc, char** argv, Options& opt) {
  bool iters_set = false, budget_set = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--help" || a == "-h") {
      usage(argv[0]);
      return 1;
    } else if (a == "--quick") {
      opt.quick = true;
    } else if (a == "--out" && has_value) {
      opt.out = argv[++i];
    } else if (a == "--iters" && has_value) {
      double v = 0;
      if (!parse_positive(argv[++i], 1e8, v) || v != static_cast<double>(static_cast<int>(v))) {
        std::fprintf(stderr, "--iters wants a whole number from 1 to 1e8, not '%s'\n", argv[i]);
        return 2;
      }
      opt.iters = static_cast<int>(v);
      iters_set = true;
    } else if (a == "--budget-ms" && has_value) {
      if (!parse_positive(argv[++i], 1e7, opt.budget_ms)) {
        std::fprintf(stderr, "--budget-ms wants a number > 0, not '%s'\n", argv[i]);
        return 2;
      }
      budget_set = true;
    } else {
      std::fprintf(stderr, "unknown or incomplete argument '%s' (see --help)\n", argv[i]);
      return 2;
    }
  }
  if (!iters_set) opt.iters = opt.quick ? 20 : 1000;
  if (!budget_set) opt.budget_ms = opt.quick ? 20 : 250;
  opt.min_iters = std::min(opt.iters, 10);
  opt.warmup = opt.quick ? 2 : 5;
  return 0;
}

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// ---------------------------------------------------------------------------------------------
// Object layout and data pattern.

// `count` blocks of `block` bytes, `stride` bytes apart (a contiguous buffer: one block with
// stride == block). Checks cover the span plus kGuard bytes.
struct Layout {
  std::int64_t count = 0, block = 0, stride = 0;
  std::int64_t span() const { return count * stride; }
  std::int64_t checked() const { return span() + kGuard; }
  std::int64_t packed() const { return count * block; }
};

// A byte of a hash of (i, seed): seeds are random 64-bit values, so shifted or swapped data
// never matches by accident.
__host__ __device__ inline unsigned char mix_byte(std::uint64_t i, std::uint64_t seed) {
  std::uint64_t x = i ^ seed;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return static_cast<unsigned char>((x ^ (x >> 31)) >> 24);
}

// Byte j of a buffer holding a layout: inside a block, the pattern of its packed position
// under `data_seed`; elsewhere (gaps, guard), the pattern of j under `gap_seed`. count 0: all
// gap (the poison a receiver starts from).
__host__ __device__ inline unsigned char layout_byte(std::int64_t j, std::int64_t count,
                                                     std::int64_t block, std::int64_t stride,
                                                     std::uint64_t data_seed,
                                                     std::uint64_t gap_seed) {
  const std::int64_t row = j / stride, col = j - row * stride;
  if (row < count && col < block) {
    return mix_byte(static_cast<std::uint64_t>(row * block + col), data_seed);
  }
  return mix_byte(static_cast<std::uint64_t>(j), gap_seed);
}

__global__ void fill_layout(unsigned char* p, std::int64_t n, std::int64_t count,
                            std::int64_t block, std::int64_t stride, std::uint64_t data_seed,
                            std::uint64_t gap_seed) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; j < n;
       j += step) {
    p[j] = layout_byte(j, count, block, stride, data_seed, gap_seed);
  }
}

__global__ void check_layout(const unsigned char* p, std::int64_t n, std::int64_t count,
                             std::int64_t block, std::int64_t stride, std::uint64_t data_seed,
                             std::uint64_t gap_seed, unsigned long long* bad) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; j < n;
       j += step) {
    mine += p[j] != layout_byte(j, count, block, stride, data_seed, gap_seed);
  }
  if (mine != 0) atomicAdd(bad, mine);
}

// The seeds of case `id` (both ranks derive the same ones, no messages needed).
std::uint64_t case_seed(std::uint64_t id, int role) {
  std::uint64_t x = id * 8 + static_cast<std::uint64_t>(role) + 0x5EEDull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// ---------------------------------------------------------------------------------------------
// The pack / unpack floor: bench/pack's model (pack_bench.cu: measure_machine(), footprint()
// and floor_us in main()), re-derived here for a strided layout so pack_bench.cu stays as is:
//   floor = max((R + W) / BW, L / Lambda) + t_launch
// R: bytes of the distinct 64-byte granules the blocks touch, W: the packed bytes, L: distinct
// 128-byte lines, BW: device-to-device copy rate (read + write), Lambda: scattered-line rate,
// t_launch: launch + sync of an empty kernel, all measured in this run (Lambda never below the
// 55 G lines/s H200 anchor on an H200, as bench/pack does). The model is symmetric in the two
// sides, so the unpack floor (read W packed bytes, write the same granules and lines) equals
// the pack floor; bench/pack also reports one floor for both.

struct Machine {
  double copy_bw = 0;         // bytes/s, read + write
  double lines_per_s = 0;     // Lambda used by the floor
  double lines_measured = 0;  // Lambda as measured
  double launch_us = 0;       // launch + sync of an empty kernel
  double d2h_bw = 0;          // bytes/s, pinned host <- device, one 64 MiB copy
  double h2d_bw = 0;          // bytes/s, pinned host -> device
};

__global__ void empty_kernel() {}

// One byte from each 512-byte-spaced line, kInFlight independent loads per thread.
__global__ void read_lines(const unsigned char* p, std::int64_t lines, unsigned* sink) {
  constexpr int kInFlight = 16;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  unsigned sum = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < lines;
       i += step * kInFlight) {
    unsigned char v[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const std::int64_t line = i + u * step;
      v[u] = line < lines ? p[line * 512] : 0;
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) sum += v[u];
  }
  if (sum == 0xffffffffu) *sink = sum;  // keeps the loads; never true in practice
}

double median_of(const std::function<void()>& f, int reps) {
  f();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const double a = now_us();
    f();
    t.push_back(now_us() - a);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

Machine measure_machine(const cudaDeviceProp& prop, bool quick) {
  Machine m;
  const std::int64_t bytes = std::int64_t{1} << 30;
  unsigned char *a = nullptr, *b = nullptr;
  unsigned* sink = nullptr;
  CUDA_CHECK(cudaMalloc(&a, bytes));
  CUDA_CHECK(cudaMalloc(&b, bytes));
  CUDA_CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  CUDA_CHECK(cudaMemset(a, 1, bytes));
  const double copy = median_of(
      [&] {
        CUDA_CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
        CUDA_CHECK(cudaDeviceSynchronize());
      },
      quick ? 3 : 10);
  m.copy_bw = 2.0 * static_cast<double>(bytes) / (copy * 1e-6);
  const std::int64_t lines = bytes / 512;
  const double touch = median_of(
      [&] {
        read_lines<<<prop.multiProcessorCount * 8, 256>>>(a, lines, sink);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
      },
      quick ? 3 : 10);
  m.lines_measured = static_cast<double>(lines) / (touch * 1e-6);
  m.lines_per_s = m.lines_measured;
  if (std::strstr(prop.name, "H200") != nullptr) m.lines_per_s = std::max(m.lines_per_s, 55e9);
  m.launch_us = median_of(
      [&] {
        empty_kernel<<<1, 32>>>();
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
      },
      quick ? 20 : 200);
  // The bus every method on a CUDA-unaware MPI crosses twice (sender's D2H, receiver's H2D):
  // not in the pack floors, which are device-memory figures.
  const std::int64_t bus_bytes = std::int64_t{64} << 20;
  void* pinned = nullptr;
  CUDA_CHECK(cudaMallocHost(&pinned, bus_bytes));
  const double d2h =
      median_of([&] { CUDA_CHECK(cudaMemcpy(pinned, a, bus_bytes, cudaMemcpyDeviceToHost)); },
                quick ? 3 : 10);
  const double h2d =
      median_of([&] { CUDA_CHECK(cudaMemcpy(a, pinned, bus_bytes, cudaMemcpyHostToDevice)); },
                quick ? 3 : 10);
  m.d2h_bw = static_cast<double>(bus_bytes) / (d2h * 1e-6);
  m.h2d_bw = static_cast<double>(bus_bytes) / (h2d * 1e-6);
  CUDA_CHECK(cudaFreeHost(pinned));
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(b));
  CUDA_CHECK(cudaFree(sink));
  return m;
}

// pack_bench.cu's footprint() for blocks at increasing offsets (no sort needed).
double strided_floor_us(const Layout& l, const Machine& m) {
  auto distinct = [&](std::int64_t unit) {
    std::int64_t last = -1, n = 0;
    for (std::int64_t i = 0; i < l.count; ++i) {
      const std::int64_t s = i * l.stride;
      const std::int64_t first = std::max(last + 1, s / unit), end = (s + l.block - 1) / unit;
      if (end >= first) n += end - first + 1;
      last = std::max(last, end);
    }
    return static_cast<double>(n);
  };
  const double read_bytes = distinct(64) * 64, lines = distinct(128);
  const double written = static_cast<double>(l.packed());
  return std::max((read_bytes + written) / m.copy_bw, lines / m.lines_per_s) * 1e6 + m.launch_us;
}

// ---------------------------------------------------------------------------------------------
// Transports and the ping-pong.

struct Buffers {
  unsigned char* send_obj = nullptr;   // device, object capacity
  unsigned char* recv_obj = nullptr;   // device, object capacity
  unsigned char* packed = nullptr;     // device, baseline (b)'s packed copy
  unsigned char* host_send = nullptr;  // pinned host, largest packed size + guard
  unsigned char* host_recv = nullptr;
  unsigned char* pageable_send = nullptr;  // malloc'd host, kPageableBytes + guard
  unsigned char* pageable_recv = nullptr;
  unsigned long long* bad = nullptr;  // device mismatch counter
  cudaStream_t stream = nullptr;
  int grid = 0;  // blocks of the fill / check kernels
};

// One way of moving the object: send() and recv() each complete the whole step (data in place
// on return). The object lies in send_buf / recv_buf with `layout`, on the device or the host.
struct Transport {
  std::function<void()> send, recv;
  unsigned char* send_buf = nullptr;
  unsigned char* recv_buf = nullptr;
  bool on_device = true;
  Layout layout;
};

Transport host_contiguous(const Buffers& b, std::int64_t bytes, int peer) {
  Transport t;
  t.layout = Layout{1, bytes, bytes};
  t.send_buf = b.host_send;
  t.recv_buf = b.host_recv;
  t.on_device = false;
  const int n = static_cast<int>(bytes);
  t.send = [&b, n, peer] { MPI_Send(b.host_send, n, MPI_BYTE, peer, kTag, MPI_COMM_WORLD); };
  t.recv = [&b, n, peer] {
    MPI_Recv(b.host_recv, n, MPI_BYTE, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  };
  return t;
}

// Small objects only: what preloading Strider costs a small host message in ordinary (malloc'd,
// pageable) memory, next to floor (a)'s pinned buffers.
constexpr std::int64_t kPageableBytes = 64 << 10;

Transport host_pageable(const Buffers& b, std::int64_t bytes, int peer) {
  Transport t = host_contiguous(b, bytes, peer);
  t.send_buf = b.pageable_send;
  t.recv_buf = b.pageable_recv;
  const int n = static_cast<int>(bytes);
  t.send = [&b, n, peer] { MPI_Send(b.pageable_send, n, MPI_BYTE, peer, kTag, MPI_COMM_WORLD); };
  t.recv = [&b, n, peer] {
    MPI_Recv(b.pageable_recv, n, MPI_BYTE, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  };
  return t;
}

Transport by_hand(const Buffers& b, const Layout& l, int peer) {
  Transport t;
  t.layout = l;
  t.send_buf = b.send_obj;
  t.recv_buf = b.recv_obj;
  const auto block = static_cast<std::size_t>(l.block), stride = static_cast<std::size_t>(l.stride);
  const auto rows = static_cast<std::size_t>(l.count), bytes = block * rows;
  t.send = [&b, block, stride, rows, bytes, peer] {
    CUDA_CHECK(cudaMemcpy2DAsync(b.packed, block, b.send_obj, stride, block, rows,
                                 cudaMemcpyDeviceToDevice, b.stream));
    CUDA_CHECK(cudaMemcpyAsync(b.host_send, b.packed, bytes, cudaMemcpyDeviceToHost, b.stream));
    CUDA_CHECK(cudaStreamSynchronize(b.stream));
    MPI_Send(b.host_send, static_cast<int>(bytes), MPI_BYTE, peer, kTag, MPI_COMM_WORLD);
  };
  t.recv = [&b, block, stride, rows, bytes, peer] {
    MPI_Recv(b.host_recv, static_cast<int>(bytes), MPI_BYTE, peer, kTag, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    CUDA_CHECK(cudaMemcpyAsync(b.packed, b.host_recv, bytes, cudaMemcpyHostToDevice, b.stream));
    CUDA_CHECK(cudaMemcpy2DAsync(b.recv_obj, stride, b.packed, block, block, rows,
                                 cudaMemcpyDeviceToDevice, b.stream));
    CUDA_CHECK(cudaStreamSynchronize(b.stream));
  };
  return t;
}

Transport through_strider(const Buffers& b, const Layout& l, MPI_Datatype type, int peer) {
  Transport t;
  t.layout = l;
  t.send_buf = b.send_obj;
  t.recv_buf = b.recv_obj;
  t.send = [&b, type, peer] { MPI_Send(b.send_obj, 1, type, peer, kTag, MPI_COMM_WORLD); };
  t.recv = [&b, type, peer] {
    MPI_Recv(b.recv_obj, 1, type, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  };
  return t;
}

// The MPI alone on the same device buffers and type (PMPI_*, which Strider does not interpose):
// only where the MPI is CUDA-aware; the configuration a user would pick instead of Strider.
Transport mpi_alone(const Buffers& b, const Layout& l, MPI_Datatype type, int peer) {
  Transport t = through_strider(b, l, type, peer);
  t.send = [&b, type, peer] { PMPI_Send(b.send_obj, 1, type, peer, kTag, MPI_COMM_WORLD); };
  t.recv = [&b, type, peer] {
    PMPI_Recv(b.recv_obj, 1, type, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  };
  return t;
}

// Sender's object: the data under data_seed, gaps under gap_seed; receiver's: all poison.
void prepare(const Transport& t, const Buffers& b, std::uint64_t data_seed, std::uint64_t gap_seed,
             std::uint64_t poison_seed) {
  const Layout& l = t.layout;
  if (t.on_device) {
    fill_layout<<<b.grid, 256>>>(t.send_buf, l.checked(), l.count, l.block, l.stride, data_seed,
                                 gap_seed);
    CUDA_CHECK(cudaGetLastError());
    fill_layout<<<b.grid, 256>>>(t.recv_buf, l.checked(), 0, l.block, l.stride, 0, poison_seed);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
  } else {
    for (std::int64_t j = 0; j < l.checked(); ++j) {
      t.send_buf[j] = layout_byte(j, l.count, l.block, l.stride, data_seed, gap_seed);
      t.recv_buf[j] = layout_byte(j, 0, l.block, l.stride, 0, poison_seed);
    }
  }
}

// Bytes of the receiver's buffer that differ from the peer's data (in the blocks) or from the
// poison (everywhere else, the guard included).
long long count_wrong(const Transport& t, const Buffers& b, std::uint64_t data_seed,
                      std::uint64_t poison_seed) {
  const Layout& l = t.layout;
  if (!t.on_device) {
    long long bad = 0;
    for (std::int64_t j = 0; j < l.checked(); ++j) {
      bad += t.recv_buf[j] != layout_byte(j, l.count, l.block, l.stride, data_seed, poison_seed);
    }
    return bad;
  }
  unsigned long long bad = 0;
  CUDA_CHECK(cudaMemset(b.bad, 0, sizeof bad));
  check_layout<<<b.grid, 256>>>(t.recv_buf, l.checked(), l.count, l.block, l.stride, data_seed,
                                poison_seed, b.bad);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaMemcpy(&bad, b.bad, sizeof bad, cudaMemcpyDeviceToHost));
  return static_cast<long long>(bad);
}

using GetStats = int (*)(strider_stats*, size_t);
using SetMethod = int (*)(const char*);

using strider::bench::methods_between;
using strider::bench::StatsBox;

struct Measured {
  double median = 0, p10 = 0, p90 = 0;  // half round trip, us (rank 0)
  int samples = 0;
  long long wrong = 0;  // bytes wrong on both receivers, both checks (rank 0)
  std::string ran;      // what Strider did, "r0|r1" where the ranks differ (rank 0)
};

// One case, on both ranks: verify one round trip, time warm-up plus n round trips (n sized on
// rank 0 from the warm-up and the budget), verify again. `few` (a path that may take seconds a
// message): one warm-up round trip and at most 5 timed ones.
Measured ping_pong(int rank, const Transport& t, const Buffers& b, const Options& opt,
                   std::uint64_t case_id, GetStats get_stats, bool few = false) {
  const int other = 1 - rank;
  auto round_trip = [&] {
    if (rank == 0) {
      t.send();
      t.recv();
    } else {
      t.recv();
      t.send();
    }
  };
  StatsBox before, after;
  if (get_stats) get_stats(&before.s, sizeof before.s);
  const std::uint64_t data_seed[2] = {case_seed(case_id, 0), case_seed(case_id, 1)};
  const std::uint64_t poison_seed = case_seed(case_id, 2 + rank);
  prepare(t, b, data_seed[rank], case_seed(case_id, 4 + rank), poison_seed);
  MPI_Barrier(MPI_COMM_WORLD);
  round_trip();
  long long wrong = count_wrong(t, b, data_seed[other], poison_seed);

  MPI_Barrier(MPI_COMM_WORLD);
  const double w0 = now_us();
  const int warmup = few ? 1 : opt.warmup;
  for (int i = 0; i < warmup; ++i) round_trip();
  const double per_round_us = (now_us() - w0) / warmup;
  const int most = few ? std::min(opt.iters, 5) : opt.iters;
  int n = most;
  if (rank == 0) {
    const double fit = opt.budget_ms * 1e3 / std::max(per_round_us, 1e-3);
    n = static_cast<int>(
        std::min(static_cast<double>(most),
                 std::max(static_cast<double>(std::min(opt.min_iters, most)), fit)));
  }
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<double> half;
  half.reserve(static_cast<std::size_t>(n));
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < n; ++i) {
    const double a = now_us();
    round_trip();
    half.push_back((now_us() - a) / 2);
  }
  // The last round trip left the peer's data again; nothing else may have changed.
  wrong += count_wrong(t, b, data_seed[other], poison_seed);
  if (get_stats) get_stats(&after.s, sizeof after.s);

  Measured m;
  std::sort(half.begin(), half.end());
  auto at = [&half](double q) {
    return half[static_cast<std::size_t>(q * static_cast<double>(half.size() - 1) + 0.5)];
  };
  m.median = half[half.size() / 2];
  m.p10 = at(0.1);
  m.p90 = at(0.9);
  m.samples = n;
  MPI_Reduce(&wrong, &m.wrong, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  char mine[64] = {}, both[2][64] = {};
  std::snprintf(mine, sizeof mine, "%s",
                get_stats ? methods_between(before.s, after.s).c_str() : "n/a");
  MPI_Gather(mine, 64, MPI_CHAR, both, 64, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    both[0][63] = both[1][63] = '\0';
    m.ran = both[0];
    if (std::strcmp(both[0], both[1]) != 0) m.ran = m.ran + "|" + both[1];
  }
  return m;
}

std::string size_label(std::int64_t bytes) {
  return bytes >= (1 << 20) ? std::to_string(bytes >> 20) + "MiB"
                            : std::to_string(bytes >> 10) + "KiB";
}

// Where the two ranks run: "1gpu" (one GPU shared), "2gpu" (two GPUs of one node), "2node".
std::string placement(int rank, int device) {
  char mine[MPI_MAX_PROCESSOR_NAME + 32] = {};
  char both[2][sizeof mine] = {};
  int len = 0;
  MPI_Get_processor_name(mine, &len);
  char bus[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  const std::size_t at = std::strlen(mine);
  std::snprintf(mine + at, sizeof mine - at, "/%s", bus);
  MPI_Gather(mine, static_cast<int>(sizeof mine), MPI_CHAR, both, static_cast<int>(sizeof mine),
             MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank != 0) return "";
  both[0][sizeof mine - 1] = both[1][sizeof mine - 1] = '\0';
  if (std::strcmp(both[0], both[1]) == 0) return "1gpu";
  const char* s0 = std::strrchr(both[0], '/');
  const char* s1 = std::strrchr(both[1], '/');
  const bool same_node =
      s0 - both[0] == s1 - both[1] &&
      std::strncmp(both[0], both[1], static_cast<std::size_t>(s0 - both[0])) == 0;
  return same_node ? "2gpu" : "2node";
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (const int parsed = parse_args(argc, argv, opt); parsed != 0) return parsed == 1 ? 0 : 2;
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "pingpong: needs exactly 2 ranks, not %d\n", size);
    MPI_Finalize();
    return 2;
  }
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int local_rank = 0;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  int ndev = 0;
  int have_gpu = cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &have_gpu, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!have_gpu) {
    if (rank == 0) std::printf("pingpong: no CUDA device on every rank; nothing measured\n");
    MPI_Finalize();
    return 0;
  }
  const int device = local_rank % ndev;
  CUDA_CHECK(cudaSetDevice(device));
  CUDA_CHECK(cudaFree(nullptr));
  const std::string where = placement(rank, device);

  // Strider present (both ranks alike)? Without strider_set_method there is no point-to-point
  // support: device pointers would reach an MPI that cannot read them.
  const auto get_stats = reinterpret_cast<GetStats>(dlsym(RTLD_DEFAULT, "strider_get_stats_sized"));
  const auto set_method = reinterpret_cast<SetMethod>(dlsym(RTLD_DEFAULT, "strider_set_method"));
  int with_strider = get_stats != nullptr && set_method != nullptr ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &with_strider, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  int aware = strider::bench::mpi_cuda_aware() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &aware, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  // The floors' machine numbers, measured on rank 0's GPU while rank 1 waits.
  Machine machine;
  if (rank == 0) machine = measure_machine(prop, opt.quick);
  double numbers[6] = {machine.copy_bw,   machine.lines_per_s, machine.lines_measured,
                       machine.launch_us, machine.d2h_bw,      machine.h2d_bw};
  MPI_Bcast(numbers, 6, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  machine = Machine{numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5]};

  FILE* csv = nullptr;
  int csv_ok = 1;
  if (rank == 0) {
    csv = std::fopen(opt.out.c_str(), "w");
    if (csv == nullptr) {
      std::perror(opt.out.c_str());
      csv_ok = 0;
    }
  }
  MPI_Bcast(&csv_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!csv_ok) {
    MPI_Finalize();
    return 2;
  }

  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  if (rank == 0) {
    std::printf(
        "device %s (%s, %s), %s: copy %.2f TB/s (read+write), %.1f G lines/s (floor uses %.1f), "
        "launch+sync %.2f us, pinned D2H %.1f GB/s, H2D %.1f GB/s; Strider p2p %s\n",
        prop.name, where.c_str(), mpi_name(), date, machine.copy_bw / 1e12,
        machine.lines_measured / 1e9, machine.lines_per_s / 1e9, machine.launch_us,
        machine.d2h_bw / 1e9, machine.h2d_bw / 1e9,
        with_strider ? "loaded" : "NOT loaded: baseline (b) only");
    std::fprintf(csv,
                 "device,date,mpi,placement,object_bytes,block,stride,count,method,half_rtt_us,"
                 "p10_us,p90_us,samples,floor_a_us,pack_floor_us,unpack_floor_us,target_us,"
                 "ratio,baseline_b_us,speedup_vs_b,method_ran,errors,copy_tbps,lines_gps,"
                 "launch_us,d2h_gbps,h2d_gbps\n");
  }

  const std::vector<std::int64_t> sizes = {1024, 1 << 20, 4 << 20};
  const std::vector<std::int64_t> blocks =
      opt.quick ? std::vector<std::int64_t>{1, 8, 64, 512}
                : std::vector<std::int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
  std::int64_t capacity = 0, largest = 0;
  for (std::int64_t s : sizes) {
    largest = std::max(largest, s);
    for (std::int64_t blk : blocks) capacity = std::max(capacity, s / blk * kStride);
  }
  Buffers buf;
  buf.grid = prop.multiProcessorCount * 8;
  CUDA_CHECK(cudaMalloc(&buf.send_obj, capacity + kGuard));
  CUDA_CHECK(cudaMalloc(&buf.recv_obj, capacity + kGuard));
  CUDA_CHECK(cudaMalloc(&buf.packed, largest));
  CUDA_CHECK(cudaMalloc(&buf.bad, sizeof(unsigned long long)));
  CUDA_CHECK(cudaMallocHost(&buf.host_send, largest + kGuard));
  CUDA_CHECK(cudaMallocHost(&buf.host_recv, largest + kGuard));
  buf.pageable_send = static_cast<unsigned char*>(std::malloc(kPageableBytes + kGuard));
  buf.pageable_recv = static_cast<unsigned char*>(std::malloc(kPageableBytes + kGuard));
  CUDA_CHECK(cudaStreamCreateWithFlags(&buf.stream, cudaStreamNonBlocking));

  const int peer = 1 - rank;
  std::uint64_t case_id = 0;
  long long failed_cases = 0;
  const double start = now_us();
  auto failed = [&failed_cases](const Measured& m) {
    if (m.wrong != 0) ++failed_cases;
    return m.wrong != 0;
  };
  for (std::int64_t object : sizes) {
    const Measured fa =
        ping_pong(rank, host_contiguous(buf, object, peer), buf, opt, case_id++, get_stats);
    if (rank == 0) {
      std::printf(
          "\n%s object: floor (a) host ping-pong of %lld B: %.2f us (p10 %.2f, p90 %.2f, %d "
          "samples, Strider: %s)%s\n",
          size_label(object).c_str(), static_cast<long long>(object), fa.median, fa.p10, fa.p90,
          fa.samples, fa.ran.c_str(), failed(fa) ? "  WRONG DATA" : "");
    }
    if (object <= kPageableBytes) {
      const Measured fp =
          ping_pong(rank, host_pageable(buf, object, peer), buf, opt, case_id++, get_stats);
      if (rank == 0) {
        std::printf(
            "%s object: host ping-pong in malloc'd memory: %.2f us (p10 %.2f, p90 %.2f)%s\n",
            size_label(object).c_str(), fp.median, fp.p10, fp.p90,
            failed(fp) ? "  WRONG DATA" : "");
      }
    }
    if (rank == 0) {
      std::printf("%-6s %5s %-10s %9s %8s %8s %8s %8s %8s %8s %6s %9s %6s %-16s %s\n", "object",
                  "block", "method", "half-RTT", "p10", "p90", "floor_a", "pack_fl", "unpk_fl",
                  "target", "ratio", "base_b", "vs_b", "ran", "errors");
    }
    for (std::int64_t block : blocks) {
      const Layout layout{object / block, block, kStride};
      MPI_Datatype vec;
      MPI_Type_vector(static_cast<int>(layout.count), static_cast<int>(block),
                      static_cast<int>(kStride), MPI_BYTE, &vec);
      MPI_Type_commit(&vec);
      const double pack_floor = strided_floor_us(layout, machine);
      const double unpack_floor = pack_floor;  // the model is symmetric (see above)
      const double target = 1.2 * (fa.median + pack_floor + unpack_floor);
      const Measured base =
          ping_pong(rank, by_hand(buf, layout, peer), buf, opt, case_id++, get_stats);
      auto emit = [&](const char* method, const Measured& m) {
        if (rank != 0) return;
        const bool bad = failed(m);
        std::fprintf(csv,
                     "%s,%s,%s,%s,%lld,%lld,%lld,%lld,%s,%.2f,%.2f,%.2f,%d,%.2f,%.2f,%.2f,%.2f,"
                     "%.3f,%.2f,%.3f,%s,%lld,%.3f,%.2f,%.2f,%.1f,%.1f\n",
                     prop.name, date, mpi_name(), where.c_str(), static_cast<long long>(object),
                     static_cast<long long>(block), static_cast<long long>(kStride),
                     static_cast<long long>(layout.count), method, m.median, m.p10, m.p90,
                     m.samples, fa.median, pack_floor, unpack_floor, target, m.median / target,
                     base.median, base.median / m.median, m.ran.c_str(), m.wrong,
                     machine.copy_bw / 1e12, machine.lines_per_s / 1e9, machine.launch_us,
                     machine.d2h_bw / 1e9, machine.h2d_bw / 1e9);
        std::fflush(csv);
        std::printf(
            "%-6s %5lld %-10s %9.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %6.2f %9.1f %6.2f %-16s "
            "%lld%s\n",
            size_label(object).c_str(), static_cast<long long>(block), method, m.median, m.p10,
            m.p90, fa.median, pack_floor, unpack_floor, target, m.median / target, base.median,
            base.median / m.median, m.ran.c_str(), m.wrong, bad ? "  WRONG DATA" : "");
        std::fflush(stdout);
      };
      emit("baseline_b", base);
      // The MPI alone copies block by block (Open MPI's CUDA convertor: one copy per block):
      // beyond kAloneBlocks blocks a message takes seconds, so those cases are left out.
      if (aware && layout.count <= kAloneBlocks) {
        emit("mpi_alone", ping_pong(rank, mpi_alone(buf, layout, vec, peer), buf, opt, case_id++,
                                    get_stats, true));
      } else if (aware && rank == 0) {
        std::printf("%-6s %5lld mpi_alone  left out: %lld blocks > %lld\n",
                    size_label(object).c_str(), static_cast<long long>(block),
                    static_cast<long long>(layout.count), static_cast<long long>(kAloneBlocks));
      }
      for (const char* method : kMethods) {
        if (!with_strider) break;
        int rc = set_method(method);
        MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (rc != 0) {
          if (rank == 0) std::fprintf(stderr, "strider_set_method(\"%s\") refused\n", method);
          continue;
        }
        emit(method, ping_pong(rank, through_strider(buf, layout, vec, peer), buf, opt, case_id++,
                               get_stats));
      }
      MPI_Type_free(&vec);
    }
  }
  if (with_strider) set_method("auto");
  MPI_Bcast(&failed_cases, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::fclose(csv);
    std::printf("\n%llu cases in %.1f s; %lld with wrong data; CSV: %s\n",
                static_cast<unsigned long long>(case_id), (now_us() - start) * 1e-6, failed_cases,
                opt.out.c_str());
  }
  CUDA_CHECK(cudaStreamDestroy(buf.stream));
  CUDA_CHECK(cudaFreeHost(buf.host_send));
  CUDA_CHECK(cudaFreeHost(buf.host_recv));
  CUDA_CHECK(cudaFree(buf.bad));
  CUDA_CHECK(cudaFree(buf.packed));
  CUDA_CHECK(cudaFree(buf.recv_obj));
  CUDA_CHECK(cudaFree(buf.send_obj));
  MPI_Finalize();
  return failed_cases != 0 ? 1 : 0;
}
