// bench/transpose: the all-to-all redistributions of a distributed FFT ("transposes") on GPU
// buffers, in two MPI forms beside a hand-written expert baseline and a computed floor, timed
// side by side in the same run.
//
// Cases, P ranks, N divisible by P, b = N/P, doubles, C order:
//   2d: an N x N array in row slabs, local (b, N), redistributed into column slabs, local (N, b).
//   3d: an N^3 array in slabs of axis 0, local (b, N, N), redistributed into slabs of axis 2,
//       local (N, N, b): the slab decomposition's transpose that brings the last axis to a rank.
// Both are one pattern with a middle axis of M = 1 (2d) or N (3d): before (b, M, N), after
// (N, M, b); rank p's block for rank q is before[:, :, q*b:(q+1)*b] and lands in q's
// after[p*b:(p+1)*b, :, :], which is contiguous there.
//
// Forms (each verified once before timing and once after it):
//   alltoallw       MPI_Alltoallw, count 1 per peer: send type = MPI_Type_create_subarray of
//                   the before array (size (b, M, b) at (0, 0, q*b)), receive type = subarray of
//                   the after array (size (b, M, b) at (q*b, 0, 0)); 2-dimensional types in the
//                   2d case. This is how mpi4py-fft and heFFTe-style codes express it.
//   alltoall_vector the classic: MPI_Alltoall of MPI_Type_vector(b*M rows, b doubles, stride
//                   N) resized to an extent of b doubles (so peer q's block starts q*b doubles
//                   in), received as b*M*b contiguous MPI_DOUBLEs.
//   expert          by hand: one pack kernel gathers all P blocks into one device buffer
//                   (peer-major), one copy to pinned host memory, MPI_Alltoall of contiguous
//                   doubles on the host buffers, one copy back straight into the after array.
//                   No unpack kernel: the received blocks are already contiguous in the new
//                   layout, so the unpack is the identity and an expert would not run one.
//                   Phases (CUDA events / wall clock): pack, d2h, comm, h2d.
//   floor           computed: B = the local array's bytes (every block, the rank's own
//                   included, as MPI_Alltoall moves it): one pack reads and writes B at the
//                   measured device-to-device copy rate, B crosses the bus once each way at the
//                   D2H / H2D times measured at that size between the benchmark's buffers, plus
//                   one launch+sync:  floor = 2B / copy_bw + t_launch + t_d2h(B) + t_h2d(B).
//                   Phase floors: pack 2B/copy_bw + t_launch, d2h t_d2h(B), h2d t_h2d(B).
//
// Timing: an iteration is one transpose of each form in turn (interleaved), each after a
// barrier; a sample is the slowest rank's wall-clock time; rows give median, p10, p90.
// --memory host: host arrays, the pack kernel as a CPU loop, no CUDA call (runs without a GPU,
// with or without LD_PRELOAD=libstrider.so); its floor has no bus or launch terms.
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../common/cuda_check.hpp"
#include "../common/exchange_common.hpp"
#include "../common/mpi_name.hpp"

namespace {

using strider::bench::Memory;
using strider::bench::now_us;
using strider::bench::Summary;

constexpr const char* kAllForms[] = {"alltoallw", "alltoall_vector", "expert"};

struct Options {
  std::vector<int> n3d, n2d;
  std::set<std::string> cases;
  int iters = 20;
  int warmup = 3;
  std::set<std::string> forms;
  Memory memory = Memory::Device;
  std::string csv = "transpose.csv";
};

void usage(const char* argv0) {
  std::printf(
      "usage: %s [--n N...] [--n2d N...] [--cases 2d,3d] [--iters I] [--warmup W]\n"
      "          [--forms F,...] [--memory device|host] [--csv FILE]\n"
      "FFT-style transposes of GPU arrays of doubles over all ranks: 2d (N x N, row slabs to\n"
      "column slabs) and 3d (N^3, slabs of axis 0 to slabs of axis 2), as MPI_Alltoallw of\n"
      "subarray types, MPI_Alltoall of a resized vector type and a by-hand expert baseline (pack\n"
      "kernel + pinned host MPI_Alltoall), timed interleaved against a computed floor. Run with\n"
      "LD_PRELOAD=libstrider.so on an MPI that is not CUDA-aware. N must be a multiple of the\n"
      "number of ranks (other sizes are skipped with a note).\n"
      "  --n N...        3d edges (list: 64,128 or 64 128; default 64 128 256)\n"
      "  --n2d N...      2d edges (default 1024 4096 8192)\n"
      "  --cases C,...   2d, 3d or both (default both)\n"
      "  --iters I       timed transposes per form and size (default 20)\n"
      "  --warmup W      untimed transposes first (default 3)\n"
      "  --forms F,...   subset of alltoallw,alltoall_vector,expert (default all)\n"
      "  --memory M      device (default) or host: host arrays, CPU loops, no CUDA\n"
      "  --csv FILE      CSV output (default transpose.csv), written by rank 0\n"
      "Exit status: 0 done (or --memory device without a GPU: nothing measured), 1 a wrong\n"
      "result or a CUDA error, 2 a usage error.\n",
      argv0);
}

bool parse_names(const std::string& list, const std::vector<std::string>& known,
                 std::set<std::string>& out, const char* option) {
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const std::string f = list.substr(at, comma - at);
    at = comma + 1;
    if (f.empty()) continue;
    bool ok = false;
    for (const std::string& k : known) ok = ok || f == k;
    if (!ok) {
      std::fprintf(stderr, "%s: unknown name '%s'\n", option, f.c_str());
      return false;
    }
    out.insert(f);
  }
  return true;
}

// 0: run; 1: --help printed; 2: usage error printed.
int parse_args(int argc, char** argv, Options& opt) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--help" || a == "-h") {
      usage(argv[0]);
      return 1;
    } else if (a == "--n" || a == "--n2d") {
      auto& list = a == "--n" ? opt.n3d : opt.n2d;
      if (!strider::bench::parse_int_list(argc, argv, i, 1, a == "--n" ? 4096 : 1 << 20, list)) {
        std::fprintf(stderr, "%s wants a list of whole numbers > 0\n", a.c_str());
        return 2;
      }
    } else if ((a == "--iters" || a == "--warmup") && has_value) {
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < (a == "--iters" ? 1 : 0) || v > 1000000) {
        std::fprintf(stderr, "%s wants a whole number, not '%s'\n", a.c_str(), argv[i]);
        return 2;
      }
      (a == "--iters" ? opt.iters : opt.warmup) = static_cast<int>(v);
    } else if (a == "--forms" && has_value) {
      if (!parse_names(argv[++i], {std::begin(kAllForms), std::end(kAllForms)}, opt.forms,
                       "--forms")) {
        return 2;
      }
    } else if (a == "--cases" && has_value) {
      if (!parse_names(argv[++i], {"2d", "3d"}, opt.cases, "--cases")) return 2;
    } else if (a == "--memory" && has_value) {
      const std::string m = argv[++i];
      if (m != "device" && m != "host") {
        std::fprintf(stderr, "--memory wants device or host, not '%s'\n", m.c_str());
        return 2;
      }
      opt.memory = m == "host" ? Memory::Host : Memory::Device;
    } else if (a == "--csv" && has_value) {
      opt.csv = argv[++i];
    } else {
      std::fprintf(stderr, "unknown or incomplete argument '%s' (see --help)\n", argv[i]);
      return 2;
    }
  }
  if (opt.n3d.empty()) opt.n3d = {64, 128, 256};
  if (opt.n2d.empty()) opt.n2d = {1024, 4096, 8192};
  if (opt.cases.empty()) opt.cases = {"2d", "3d"};
  if (opt.forms.empty()) opt.forms = {std::begin(kAllForms), std::end(kAllForms)};
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Geometry: before (b, M, N), after (N, M, b), rank p.

struct Geometry {
  long long n, m, b;
  int p, ranks;
  __host__ __device__ long long cells() const { return b * m * n; }  // both layouts
  __host__ __device__ long long block_cells() const { return b * m * b; }
};

// Global cell (i, k, j) of the N x M x N array: a distinct whole number, never 0 or -1.
__host__ __device__ inline double global_value(long long i, long long k, long long j,
                                               const Geometry& g) {
  return static_cast<double>((i * g.m + k) * g.n + j + 1);
}

// Before: local (il, k, j) is global (p*b + il, k, j).
__host__ __device__ inline double before_value(long long c, const Geometry& g) {
  const long long j = c % g.n, t = c / g.n;
  const long long k = t % g.m, il = t / g.m;
  return global_value(g.p * g.b + il, k, j, g);
}

// After: local (i, k, jl) is global (i, k, p*b + jl).
__host__ __device__ inline double after_value(long long c, const Geometry& g) {
  const long long jl = c % g.b, t = c / g.b;
  const long long k = t % g.m, i = t / g.m;
  return global_value(i, k, g.p * g.b + jl, g);
}

__global__ void fill_kernel(double* before, double* after, Geometry g) {
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long c = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; c < g.cells();
       c += step) {
    before[c] = before_value(c, g);
    after[c] = -1.0;
  }
}

__global__ void check_kernel(const double* before, const double* after, Geometry g,
                             unsigned long long* bad) {
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (long long c = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; c < g.cells();
       c += step) {
    mine += (after[c] != after_value(c, g)) + (before[c] != before_value(c, g));
  }
  if (mine != 0) atomicAdd(bad, mine);
}

// The expert's pack: packed[(q, row, jl)] = before[row, q*b + jl], row = (il, k).
__host__ __device__ inline long long pack_source(long long e, const Geometry& g) {
  const long long q = e / g.block_cells(), rem = e % g.block_cells();
  const long long row = rem / g.b, jl = rem % g.b;
  return row * g.n + q * g.b + jl;
}

__global__ void pack_kernel(const double* __restrict__ before, double* __restrict__ packed,
                            Geometry g) {
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < g.cells();
       e += step) {
    packed[e] = before[pack_source(e, g)];
  }
}

using Phases = std::map<std::string, double>;

struct Form {
  std::string name;
  std::vector<std::string> phases;
  std::function<void(Phases&)> run;
};

struct Problem {
  Memory mem;
  Geometry g{};
  double* before = nullptr;
  double* after = nullptr;
  double* packed = nullptr;
  double* host_send = nullptr;
  double* host_recv = nullptr;
  std::vector<MPI_Datatype> send_sub, recv_sub;
  MPI_Datatype vec = MPI_DATATYPE_NULL;
  std::vector<int> ones, zeros;
  cudaStream_t stream = nullptr;
  cudaEvent_t ev[3] = {};
  unsigned long long* bad = nullptr;
  int grid = 1024;
};

void setup(Problem& pr, bool two_d, int n, int rank, int ranks, Memory mem) {
  pr.mem = mem;
  Geometry& g = pr.g;
  g.n = n;
  g.m = two_d ? 1 : n;
  g.b = n / ranks;
  g.p = rank;
  g.ranks = ranks;
  const std::size_t bytes = static_cast<std::size_t>(g.cells()) * sizeof(double);
  pr.before = static_cast<double*>(strider::bench::buffer_alloc(mem, bytes));
  pr.after = static_cast<double*>(strider::bench::buffer_alloc(mem, bytes));
  pr.packed = static_cast<double*>(strider::bench::buffer_alloc(mem, bytes));
  pr.host_send = static_cast<double*>(strider::bench::staging_alloc(mem, bytes));
  pr.host_recv = static_cast<double*>(strider::bench::staging_alloc(mem, bytes));
  const int b = static_cast<int>(g.b), m = static_cast<int>(g.m);
  for (int q = 0; q < ranks; ++q) {
    MPI_Datatype s, r;
    if (two_d) {
      const int before_sizes[2] = {b, n}, after_sizes[2] = {n, b}, sub[2] = {b, b};
      const int s_start[2] = {0, q * b}, r_start[2] = {q * b, 0};
      MPI_Type_create_subarray(2, before_sizes, sub, s_start, MPI_ORDER_C, MPI_DOUBLE, &s);
      MPI_Type_create_subarray(2, after_sizes, sub, r_start, MPI_ORDER_C, MPI_DOUBLE, &r);
    } else {
      const int before_sizes[3] = {b, n, n}, after_sizes[3] = {n, n, b}, sub[3] = {b, m, b};
      const int s_start[3] = {0, 0, q * b}, r_start[3] = {q * b, 0, 0};
      MPI_Type_create_subarray(3, before_sizes, sub, s_start, MPI_ORDER_C, MPI_DOUBLE, &s);
      MPI_Type_create_subarray(3, after_sizes, sub, r_start, MPI_ORDER_C, MPI_DOUBLE, &r);
    }
    MPI_Type_commit(&s);
    MPI_Type_commit(&r);
    pr.send_sub.push_back(s);
    pr.recv_sub.push_back(r);
  }
  MPI_Datatype rows;
  MPI_Type_vector(b * m, b, n, MPI_DOUBLE, &rows);
  MPI_Type_create_resized(rows, 0, static_cast<MPI_Aint>(b) * sizeof(double), &pr.vec);
  MPI_Type_free(&rows);
  MPI_Type_commit(&pr.vec);
  pr.ones.assign(ranks, 1);
  pr.zeros.assign(ranks, 0);
  if (mem == Memory::Device) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&pr.stream, cudaStreamNonBlocking));
    for (auto& e : pr.ev) CUDA_CHECK(cudaEventCreate(&e));
    CUDA_CHECK(cudaMalloc(&pr.bad, sizeof(unsigned long long)));
  }
}

void teardown(Problem& pr) {
  for (auto& t : pr.send_sub) MPI_Type_free(&t);
  for (auto& t : pr.recv_sub) MPI_Type_free(&t);
  MPI_Type_free(&pr.vec);
  strider::bench::buffer_free(pr.mem, pr.before);
  strider::bench::buffer_free(pr.mem, pr.after);
  strider::bench::buffer_free(pr.mem, pr.packed);
  strider::bench::staging_free(pr.mem, pr.host_send);
  strider::bench::staging_free(pr.mem, pr.host_recv);
  if (pr.mem == Memory::Device) {
    CUDA_CHECK(cudaStreamDestroy(pr.stream));
    for (auto& e : pr.ev) CUDA_CHECK(cudaEventDestroy(e));
    CUDA_CHECK(cudaFree(pr.bad));
  }
}

void fill(Problem& pr) {
  if (pr.mem == Memory::Device) {
    fill_kernel<<<pr.grid, 256>>>(pr.before, pr.after, pr.g);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    return;
  }
  for (long long c = 0; c < pr.g.cells(); ++c) {
    pr.before[c] = before_value(c, pr.g);
    pr.after[c] = -1.0;
  }
}

// Cells of this rank's after array (and of its before array, which must stay as it was) that
// differ from the global function.
long long count_wrong(Problem& pr) {
  unsigned long long bad = 0;
  if (pr.mem == Memory::Device) {
    CUDA_CHECK(cudaMemset(pr.bad, 0, sizeof bad));
    check_kernel<<<pr.grid, 256>>>(pr.before, pr.after, pr.g, pr.bad);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpy(&bad, pr.bad, sizeof bad, cudaMemcpyDeviceToHost));
  } else {
    for (long long c = 0; c < pr.g.cells(); ++c) {
      bad += (pr.after[c] != after_value(c, pr.g)) + (pr.before[c] != before_value(c, pr.g));
    }
  }
  return static_cast<long long>(bad);
}

std::vector<Form> make_forms(Problem& pr, const std::set<std::string>& wanted) {
  std::vector<Form> forms;
  auto add = [&](const char* name, std::vector<std::string> phases,
                 std::function<void(Phases&)> f) {
    if (wanted.count(name) != 0) forms.push_back(Form{name, std::move(phases), std::move(f)});
  };
  add("alltoallw", {}, [&pr](Phases&) {
    MPI_Alltoallw(pr.before, pr.ones.data(), pr.zeros.data(), pr.send_sub.data(), pr.after,
                  pr.ones.data(), pr.zeros.data(), pr.recv_sub.data(), MPI_COMM_WORLD);
  });
  add("alltoall_vector", {}, [&pr](Phases&) {
    MPI_Alltoall(pr.before, 1, pr.vec, pr.after, static_cast<int>(pr.g.block_cells()), MPI_DOUBLE,
                 MPI_COMM_WORLD);
  });
  add("expert", {"pack", "d2h", "comm", "h2d"}, [&pr](Phases& ph) {
    const Geometry& g = pr.g;
    const std::size_t bytes = static_cast<std::size_t>(g.cells()) * sizeof(double);
    const int count = static_cast<int>(g.block_cells());
    if (pr.mem == Memory::Host) {
      const double t0 = now_us();
      for (long long e = 0; e < g.cells(); ++e) pr.packed[e] = pr.before[pack_source(e, g)];
      const double t1 = now_us();
      std::memcpy(pr.host_send, pr.packed, bytes);
      const double t2 = now_us();
      MPI_Alltoall(pr.host_send, count, MPI_DOUBLE, pr.host_recv, count, MPI_DOUBLE,
                   MPI_COMM_WORLD);
      const double t3 = now_us();
      std::memcpy(pr.after, pr.host_recv, bytes);
      const double t4 = now_us();
      ph["pack"] += t1 - t0;
      ph["d2h"] += t2 - t1;
      ph["comm"] += t3 - t2;
      ph["h2d"] += t4 - t3;
      return;
    }
    CUDA_CHECK(cudaEventRecord(pr.ev[0], pr.stream));
    pack_kernel<<<pr.grid, 256, 0, pr.stream>>>(pr.before, pr.packed, g);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(pr.ev[1], pr.stream));
    CUDA_CHECK(cudaMemcpyAsync(pr.host_send, pr.packed, bytes, cudaMemcpyDeviceToHost, pr.stream));
    CUDA_CHECK(cudaEventRecord(pr.ev[2], pr.stream));
    CUDA_CHECK(cudaStreamSynchronize(pr.stream));
    const double c0 = now_us();
    MPI_Alltoall(pr.host_send, count, MPI_DOUBLE, pr.host_recv, count, MPI_DOUBLE, MPI_COMM_WORLD);
    const double c1 = now_us();
    CUDA_CHECK(cudaMemcpyAsync(pr.after, pr.host_recv, bytes, cudaMemcpyHostToDevice, pr.stream));
    CUDA_CHECK(cudaStreamSynchronize(pr.stream));
    const double c2 = now_us();
    float ms[2];
    CUDA_CHECK(cudaEventElapsedTime(&ms[0], pr.ev[0], pr.ev[1]));
    CUDA_CHECK(cudaEventElapsedTime(&ms[1], pr.ev[1], pr.ev[2]));
    ph["pack"] += ms[0] * 1e3;
    ph["d2h"] += ms[1] * 1e3;
    ph["comm"] += c1 - c0;
    ph["h2d"] += c2 - c1;  // host clock: the copy is synchronous with the caller anyway
  });
  return forms;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (const int parsed = parse_args(argc, argv, opt); parsed != 0) return parsed == 1 ? 0 : 2;
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const Memory mem = opt.memory;
  int device = 0;
  if (mem == Memory::Device && !strider::bench::select_gpu(device)) {
    if (rank == 0) {
      std::printf(
          "transpose: no CUDA device on every rank; nothing measured (--memory host "
          "runs without one)\n");
    }
    MPI_Finalize();
    return 0;
  }
  FILE* csv = nullptr;
  int csv_ok = 1;
  if (rank == 0) {
    csv = std::fopen(opt.csv.c_str(), "w");
    if (csv == nullptr) {
      std::perror(opt.csv.c_str());
      csv_ok = 0;
    }
  }
  MPI_Bcast(&csv_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!csv_ok) {
    MPI_Finalize();
    return 2;
  }
  strider::bench::Machine machine;
  if (rank == 0) machine = strider::bench::measure_machine(mem);
  double mnum[2] = {machine.copy_bw, machine.launch_us};
  strider::bench::bcast_doubles(mnum, 2);
  machine = strider::bench::Machine{mnum[0], mnum[1]};
  const std::string date = strider::bench::today();
  const std::string devname = strider::bench::device_label(mem, device);
  const char* mpi = strider::bench::mpi_name();
  if (rank == 0) {
    std::printf(
        "transpose: %d ranks, %s memory on %s, %s, %s: copy %.2f TB/s (read+write), "
        "launch+sync %.2f us; %d timed transposes per form (+%d warm-up)\n",
        size, mem == Memory::Host ? "host" : "device", devname.c_str(), mpi, date.c_str(),
        machine.copy_bw / 1e12, machine.launch_us, opt.iters, opt.warmup);
    std::fprintf(csv, "%s,case,local_shape,iters\n", strider::bench::kCsvHeader);
  }

  struct Case {
    bool two_d;
    int n;
  };
  std::vector<Case> cases;
  if (opt.cases.count("2d") != 0) {
    for (int n : opt.n2d) cases.push_back({true, n});
  }
  if (opt.cases.count("3d") != 0) {
    for (int n : opt.n3d) cases.push_back({false, n});
  }
  int status = 0;
  for (const Case& c : cases) {
    const char* name = c.two_d ? "2d" : "3d";
    if (c.n % size != 0) {
      if (rank == 0) {
        std::printf("\n%s N=%d: skipped, not a multiple of %d ranks\n", name, c.n, size);
      }
      continue;
    }
    Problem pr;
    setup(pr, c.two_d, c.n, rank, size, mem);
    const long long bytes = pr.g.cells() * static_cast<long long>(sizeof(double));
    double bus[2] = {0, 0};
    if (rank == 0) {
      strider::bench::measure_bus_us(mem, pr.packed, pr.host_send, static_cast<std::size_t>(bytes),
                                     bus[0], bus[1]);
    }
    strider::bench::bcast_doubles(bus, 2);
    const double pack_us =
        2.0 * static_cast<double>(bytes) / machine.copy_bw * 1e6 + machine.launch_us;
    const double floor_us = pack_us + bus[0] + bus[1];
    std::map<std::string, double> phase_floor = {
        {"total", floor_us}, {"pack", pack_us}, {"d2h", bus[0]}, {"h2d", bus[1]}};
    char shape[64];
    if (c.two_d) {
      std::snprintf(shape, sizeof shape, "%lldx%lld", pr.g.b, pr.g.n);
    } else {
      std::snprintf(shape, sizeof shape, "%lldx%lldx%lld", pr.g.b, pr.g.n, pr.g.n);
    }
    if (rank == 0) {
      std::printf(
          "\n%s N=%d (local %s): %lld bytes per rank; floor %.1f us (pack %.1f, D2H %.1f, "
          "H2D %.1f)\n",
          name, c.n, shape, bytes, floor_us, pack_us, bus[0], bus[1]);
    }
    std::vector<Form> forms = make_forms(pr, opt.forms);
    bool wrong_any = false;
    for (Form& f : forms) {
      fill(pr);
      MPI_Barrier(MPI_COMM_WORLD);
      Phases ignored;
      f.run(ignored);
      long long wrong = count_wrong(pr);
      MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      if (wrong != 0) {
        wrong_any = true;
        if (rank == 0) {
          std::fprintf(stderr, "transpose: form %s, %s N=%d: %lld wrong cells\n", f.name.c_str(),
                       name, c.n, wrong);
        }
      }
    }
    if (wrong_any) {
      status = 1;
      teardown(pr);
      break;
    }
    struct Samples {
      std::vector<double> total;
      std::map<std::string, std::vector<double>> phase;
    };
    std::vector<Samples> samples(forms.size());
    for (int it = 0; it < opt.warmup + opt.iters; ++it) {
      for (std::size_t fi = 0; fi < forms.size(); ++fi) {
        Phases ph;
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = now_us();
        forms[fi].run(ph);
        const double t = now_us() - t0;
        if (it < opt.warmup) continue;
        samples[fi].total.push_back(t);
        for (const std::string& p : forms[fi].phases) samples[fi].phase[p].push_back(ph[p]);
      }
    }
    long long wrong_after = count_wrong(pr);
    MPI_Allreduce(MPI_IN_PLACE, &wrong_after, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (wrong_after != 0) {
      if (rank == 0) {
        std::fprintf(stderr, "transpose: %lld wrong cells after the timed transposes, %s N=%d\n",
                     wrong_after, name, c.n);
      }
      status = 1;
    }
    std::map<std::string, std::map<std::string, Summary>> result;
    for (std::size_t fi = 0; fi < forms.size(); ++fi) {
      result[forms[fi].name]["total"] =
          strider::bench::summarize(strider::bench::slowest_rank(samples[fi].total));
      for (const std::string& p : forms[fi].phases) {
        result[forms[fi].name][p] =
            strider::bench::summarize(strider::bench::slowest_rank(samples[fi].phase[p]));
      }
    }
    if (rank == 0) {
      std::printf("%-16s %-6s %11s %11s %11s %11s %8s %8s\n", "form", "phase", "median_us",
                  "p10_us", "p90_us", "floor_us", "x_floor", "x_expert");
      char extra[160];
      std::snprintf(extra, sizeof extra, "%s,%s,%d", name, shape, opt.iters);
      auto row = [&](const std::string& form, const std::string& phase, const Summary& s) {
        const double fl = phase_floor.count(phase) != 0 ? phase_floor[phase] : 0;
        double ex = 0;
        if (result.count("expert") != 0 && result["expert"].count(phase) != 0) {
          ex = result["expert"][phase].median;
        }
        strider::bench::csv_row(csv, date, devname, mpi, size, c.n, form, phase, s, bytes, fl, ex,
                                extra);
        std::printf("%-16s %-6s %11.1f %11.1f %11.1f %11.1f %8.3f %8.3f\n", form.c_str(),
                    phase.c_str(), s.median, s.p10, s.p90, fl, fl > 0 ? s.median / fl : 0.0,
                    ex > 0 ? s.median / ex : 0.0);
      };
      for (const Form& f : forms) {
        row(f.name, "total", result[f.name]["total"]);
        for (const std::string& p : f.phases) row(f.name, p, result[f.name][p]);
      }
      row("floor", "total", Summary{floor_us, floor_us, floor_us});
    }
    teardown(pr);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (status != 0) break;
  }
  if (rank == 0) {
    std::fclose(csv);
    std::printf("\ntranspose: %s; CSV: %s\n", status == 0 ? "all forms verified" : "WRONG RESULTS",
                opt.csv.c_str());
  }
  MPI_Finalize();
  return status;
}
