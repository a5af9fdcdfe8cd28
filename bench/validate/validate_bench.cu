// bench/validate: does the performance model generalize, and does `auto` pick well, on objects
// strider-measure never sampled? Two ranks ping-pong GPU objects of a HELD-BACK grid with plain
// MPI_Send / MPI_Recv of a committed type, Strider preloaded:
//   block lengths off the powers of two (3, 12, 48, 96, 384, 1536, 6144 B), object sizes off the
//   x4 grid (about 3 KiB, 48 KiB, 768 KiB, 6 MiB, 40 MiB, rounded to whole blocks), stride/block
//   ratios 3 and 5 (the grid has 2 and 8), 2D (vector / hvector of MPI_BYTE blocks) and 3D
//   (hvector of a vector; outer stride 2 x inner count x inner stride, as the grid's) shapes,
//   plus a few irregular objects (MPI_Type_indexed, random block lengths and gaps).
// Per case: each fixed method (oneshot, staged, device where the MPI is CUDA-aware) and then
// `auto`, set on both ranks with strider_set_method; for each, one verified round trip (each
// receiver compares its whole buffer, gaps included, with a reference built by the MPI's own
// PMPI_Pack / PMPI_Unpack of host copies) and warm-up; then the timed round trips of all
// methods, interleaved in rounds (half a round trip on rank 0, median per method).
// strider_predict on rank 0 gives the model's totals and auto's choices; auto's regret is
// auto / fastest measured - 1 (fastest of the fixed methods and auto itself, so >= 0: auto may
// mix methods, e.g. sender one-shot and receiver staged, and beat every fixed one).
// Writes DIR/validation.csv (one row per case) and DIR/validation_summary.txt.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../common/cuda_check.hpp"
#include "../common/mpi_check.hpp"
#include "../common/mpi_name.hpp"
#include "../common/stats_diff.hpp"
#include "strider/strider.h"

namespace {

using strider::bench::mpi_name;

constexpr int kTag = 11;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kFixed = 3;  // STRIDER_ONESHOT, STRIDER_STAGED, STRIDER_DEVICE
constexpr const char* kMethodNames[kFixed] = {"oneshot", "staged", "device"};
constexpr double kGoalRegret = 0.10;    // auto within 10% of the fastest ...
constexpr double kGoalFraction = 0.95;  // ... in at least 95% of the cases

using SetMethod = int (*)(const char*);
using Predict = int (*)(MPI_Datatype, int, int, strider_prediction*);
using GetStats = int (*)(strider_stats*, size_t);

struct Options {
  bool quick = false;
  std::string out_dir = ".";
  int iters = 0;         // most timed round trips per method and case
  double budget_ms = 0;  // a method's round trips are sized to this much time (min_iters at least)
  int min_iters = 0;
  int warmup = 0;
};

// 0: run; 1: --help printed; 2: usage error printed.
int parse_args(int argc, char** argv, Options& opt) {
  CLI::App app{
      "Two ranks (mpirun -n 2), one GPU each (local rank % GPUs), run with\n"
      "LD_PRELOAD=libstrider.so (and STRIDER_PERF_FILE=perf.json from strider-measure).\n"
      "Ping-pongs a held-back grid of GPU objects the measurement did not sample (blocks 3-6144 B\n"
      "off the powers of two, sizes off the x4 grid, stride ratios 3 and 5, 2D and 3D, a few\n"
      "irregular MPI_Type_indexed objects) under each fixed method and under auto, verifies the\n"
      "data, and compares the times with strider_predict.\n"
      "Exit status: 0 done, data verified; 1 wrong data or a CUDA/MPI error; 2 a usage or\n"
      "environment error (bad option, not 2 ranks, no GPU, Strider not preloaded, DIR not\n"
      "writable).",
      "strider_bench_validate"};
  app.add_flag("--quick", opt.quick, "5 cases; at most 10 round trips, 20 ms per method and case");
  app.add_option("--iters", opt.iters,
                 "at most N timed round trips per method and case (default 100; --quick: 10)")
      ->check(CLI::Range(1, 100000000));
  app.add_option("--budget-ms", opt.budget_ms,
                 "size a method's timed round trips to about MS ms, but never below min(N, 10) "
                 "(default 200; --quick: 20)")
      ->check(CLI::Range(1e-3, 1e7));
  app.add_option("--out", opt.out_dir,
                 "where validation.csv and validation_summary.txt go (default .), written by "
                 "rank 0; created if missing");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 1 : 2;
  }
  if (opt.iters == 0) opt.iters = opt.quick ? 10 : 100;
  if (opt.budget_ms == 0) opt.budget_ms = opt.quick ? 20 : 200;
  opt.min_iters = std::min(opt.iters, 10);
  opt.warmup = opt.quick ? 2 : 3;
  return 0;
}

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// printf into a std::string.
std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  char small[512];
  const int n = std::vsnprintf(small, sizeof small, fmt, args);
  va_end(args);
  if (n < static_cast<int>(sizeof small)) return std::string(small, n > 0 ? n : 0);
  std::string big(static_cast<std::size_t>(n) + 1, '\0');
  va_start(args, fmt);
  std::vsnprintf(&big[0], big.size(), fmt, args);
  va_end(args);
  big.resize(static_cast<std::size_t>(n));
  return big;
}

std::string size_label(std::int64_t bytes) {
  if (bytes >= (std::int64_t{1} << 20)) return format("%.1fMiB", bytes / 1048576.0);
  if (bytes >= 1024) return format("%.1fKiB", bytes / 1024.0);
  return format("%lldB", static_cast<long long>(bytes));
}

// ---------------------------------------------------------------------------------------------
// Random data: byte j of a buffer under `seed` is byte j % 8 of a hash of (j / 8, seed); the
// GPU fills buffers with it and the host rebuilds the same bytes for the reference.

__host__ __device__ inline std::uint64_t hash64(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__host__ __device__ inline unsigned char pattern_byte(std::uint64_t j, std::uint64_t seed) {
  return static_cast<unsigned char>(hash64((j >> 3) ^ seed) >> (8 * (j & 7)));
}

__global__ void fill_pattern(unsigned char* p, std::int64_t n, std::uint64_t seed) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; j < n;
       j += step) {
    p[j] = pattern_byte(static_cast<std::uint64_t>(j), seed);
  }
}

void host_fill(unsigned char* p, std::int64_t n, std::uint64_t seed) {
  std::int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const std::uint64_t w = hash64((static_cast<std::uint64_t>(j) >> 3) ^ seed);
    std::memcpy(p + j, &w, 8);  // little-endian: byte k of w is pattern_byte(j + k)
  }
  for (; j < n; ++j) p[j] = pattern_byte(static_cast<std::uint64_t>(j), seed);
}

void device_fill(unsigned char* p, std::int64_t n, std::uint64_t seed, int grid) {
  fill_pattern<<<grid, 256>>>(p, n, seed);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
}

// Seeds of case `id`, role 0/1: the ranks' data; 2/3: the ranks' receive poison; 6: an irregular
// layout. Both ranks derive the same ones without messages.
std::uint64_t case_seed(std::uint64_t id, int role) {
  return hash64(id * 8 + static_cast<std::uint64_t>(role) + 0x7A11DA7Eull);
}

// ---------------------------------------------------------------------------------------------
// The held-back cases and their datatypes.

enum class Shape { Vector2D, Hvector2D, Hvector3D, Indexed };

const char* shape_name(Shape s) {
  switch (s) {
    case Shape::Vector2D:
      return "2d-vector";
    case Shape::Hvector2D:
      return "2d-hvector";
    case Shape::Hvector3D:
      return "3d-hvector-vector";
    case Shape::Indexed:
      return "indexed";
  }
  return "?";
}

struct Case {
  Shape shape = Shape::Vector2D;
  std::int64_t block = 0;   // bytes; Indexed: the mean block length
  int ratio = 0;            // stride / block; Indexed: mean (gap + block) / block
  std::int64_t target = 0;  // requested object bytes (rounded to whole blocks when built)
};

// What a built case turned out to be.
struct Built {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::int64_t bytes = 0;  // packed
  std::int64_t span = 0;   // buffer bytes the type reaches: true lb + true extent
  std::int64_t blocks = 0;
  std::int64_t inner = 0;   // 3D: blocks along the inner stride; else 0
  std::int64_t stride = 0;  // the (innermost, or mean for Indexed) block spacing
  int dims = 2;
};

constexpr std::int64_t kKiB = 1024, kMiB = 1024 * 1024;

std::vector<Case> held_back_cases(bool quick) {
  if (quick) {
    return {{Shape::Vector2D, 12, 3, 48 * kKiB},
            {Shape::Hvector2D, 384, 5, 768 * kKiB},
            {Shape::Hvector3D, 96, 3, 6 * kMiB},
            {Shape::Hvector3D, 3, 5, 3 * kKiB},
            {Shape::Indexed, 12, 3, 48 * kKiB}};
  }
  const std::int64_t blocks[] = {3, 12, 48, 96, 384, 1536, 6144};
  const std::int64_t sizes[] = {3 * kKiB, 48 * kKiB, 768 * kKiB, 6 * kMiB, 40 * kMiB};
  const int ratios[] = {3, 5};
  std::vector<Case> out;
  for (std::int64_t size : sizes) {
    for (int bi = 0; bi < 7; ++bi) {
      for (int ri = 0; ri < 2; ++ri) {
        const std::int64_t block = blocks[bi];
        // 2D: at least 2 blocks; alternate the two constructors (same canonical form).
        if (size / block >= 2) {
          out.push_back(
              {(bi + ri) % 2 == 0 ? Shape::Vector2D : Shape::Hvector2D, block, ratios[ri], size});
        }
        // 3D: at least 2 x 2 blocks.
        if (size / block >= 4) out.push_back({Shape::Hvector3D, block, ratios[ri], size});
      }
    }
  }
  for (std::int64_t size : {48 * kKiB, 768 * kKiB, 6 * kMiB}) {
    for (std::int64_t mean : {12, 384}) out.push_back({Shape::Indexed, mean, 3, size});
  }
  return out;
}

void commit(MPI_Datatype& t) { MPI_CHECK(MPI_Type_commit(&t)); }

// 2D: blocks = target / block (whole blocks, >= 2), stride = ratio x block.
Built build_2d(const Case& c) {
  Built b;
  b.blocks = std::max<std::int64_t>(2, c.target / c.block);
  b.stride = c.block * c.ratio;
  b.dims = 2;
  const int n = static_cast<int>(b.blocks), len = static_cast<int>(c.block);
  if (c.shape == Shape::Vector2D) {
    MPI_CHECK(MPI_Type_vector(n, len, static_cast<int>(b.stride), MPI_BYTE, &b.type));
  } else {
    MPI_CHECK(MPI_Type_create_hvector(n, len, static_cast<MPI_Aint>(b.stride), MPI_BYTE, &b.type));
  }
  commit(b.type);
  return b;
}

// 3D: inner = round(sqrt(blocks)) along the inner stride (not a power of two, unlike the
// grid's), outer = blocks / inner along an outer stride of 2 x inner x inner stride.
Built build_3d(const Case& c) {
  Built b;
  const std::int64_t wanted = std::max<std::int64_t>(4, c.target / c.block);
  b.inner = std::max<std::int64_t>(2, std::llround(std::sqrt(static_cast<double>(wanted))));
  const std::int64_t outer = std::max<std::int64_t>(2, wanted / b.inner);
  b.blocks = b.inner * outer;
  b.stride = c.block * c.ratio;
  b.dims = 3;
  MPI_Datatype row = MPI_DATATYPE_NULL;
  MPI_CHECK(MPI_Type_vector(static_cast<int>(b.inner), static_cast<int>(c.block),
                            static_cast<int>(b.stride), MPI_BYTE, &row));
  MPI_CHECK(MPI_Type_create_hvector(static_cast<int>(outer), 1,
                                    static_cast<MPI_Aint>(2 * b.inner * b.stride), row, &b.type));
  MPI_CHECK(MPI_Type_free(&row));
  commit(b.type);
  return b;
}

// Irregular: block lengths uniform in [1, 2 mean - 1], gaps uniform in [1, 2 (ratio - 1) mean
// - 1], until the target bytes; a fixed seed per case so both ranks build the same type.
Built build_indexed(const Case& c, std::uint64_t case_id) {
  Built b;
  std::mt19937_64 rng(case_seed(case_id, 6));
  std::uniform_int_distribution<std::int64_t> len(1, 2 * c.block - 1);
  std::uniform_int_distribution<std::int64_t> gap(
      1, std::max<std::int64_t>(1, 2 * (c.ratio - 1) * c.block - 1));
  std::vector<int> lens, displs;
  std::int64_t at = 0;
  while (b.bytes < c.target) {
    const std::int64_t l = len(rng);
    lens.push_back(static_cast<int>(l));
    displs.push_back(static_cast<int>(at));
    b.bytes += l;
    at += l + gap(rng);
  }
  b.blocks = static_cast<std::int64_t>(lens.size());
  b.stride = at / b.blocks;
  b.dims = 2;
  MPI_CHECK(MPI_Type_indexed(static_cast<int>(lens.size()), lens.data(), displs.data(), MPI_BYTE,
                             &b.type));
  commit(b.type);
  return b;
}

Built build(const Case& c, std::uint64_t case_id) {
  Built b = c.shape == Shape::Hvector3D ? build_3d(c)
            : c.shape == Shape::Indexed ? build_indexed(c, case_id)
                                        : build_2d(c);
  int size = 0;
  MPI_CHECK(MPI_Type_size(b.type, &size));
  b.bytes = size;
  MPI_Aint lb = 0, extent = 0;
  MPI_CHECK(MPI_Type_get_true_extent(b.type, &lb, &extent));
  if (lb < 0) {
    std::fprintf(stderr, "validate: case %llu has a negative true lower bound\n",
                 static_cast<unsigned long long>(case_id));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  b.span = lb + extent;
  return b;
}

// The span a case needs, without committing it (for sizing the buffers up front).
std::int64_t span_of(const Case& c, std::uint64_t case_id) {
  Built b = build(c, case_id);
  MPI_CHECK(MPI_Type_free(&b.type));
  return b.span;
}

// ---------------------------------------------------------------------------------------------
// Buffers, verification and the ping-pong.

struct Buffers {
  unsigned char* send_obj = nullptr;    // device, largest span
  unsigned char* recv_obj = nullptr;    // device, largest span
  std::vector<unsigned char> expected;  // host: what recv_obj must hold after a receive
  std::vector<unsigned char> scratch;   // host: the peer's data, then recv_obj's copy
  std::vector<unsigned char> packed;    // host: the peer's data, packed by the MPI
  int grid = 0;                         // blocks of the fill kernel
};

struct Ctx {
  int rank = 0;
  Options opt;
  Buffers* buf = nullptr;
  SetMethod set_method = nullptr;
  GetStats get_stats = nullptr;  // optional: which transfers Strider ran
};

// The reference for this rank's receive buffer: its poison with the peer's data unpacked into
// it by the MPI itself (PMPI_*: the MPI's own pack, not Strider's, which serves host buffers).
void build_expected(const Built& b, Buffers& buf, std::uint64_t peer_seed,
                    std::uint64_t poison_seed) {
  const auto span = static_cast<std::size_t>(b.span);
  buf.expected.resize(span);
  buf.scratch.resize(span);
  buf.packed.resize(static_cast<std::size_t>(b.bytes));
  host_fill(buf.expected.data(), b.span, poison_seed);
  host_fill(buf.scratch.data(), b.span, peer_seed);
  const int packed_size = static_cast<int>(b.bytes);
  int position = 0;
  MPI_CHECK(PMPI_Pack(buf.scratch.data(), 1, b.type, buf.packed.data(), packed_size, &position,
                      MPI_COMM_SELF));
  position = 0;
  MPI_CHECK(PMPI_Unpack(buf.packed.data(), packed_size, &position, buf.expected.data(), 1, b.type,
                        MPI_COMM_SELF));
}

// Bytes of recv_obj (whole span: typemap and gaps) that differ from the reference.
long long count_wrong(const Built& b, Buffers& buf) {
  CUDA_CHECK(cudaMemcpy(buf.scratch.data(), buf.recv_obj, static_cast<std::size_t>(b.span),
                        cudaMemcpyDeviceToHost));
  if (std::memcmp(buf.scratch.data(), buf.expected.data(), static_cast<std::size_t>(b.span)) == 0) {
    return 0;
  }
  long long bad = 0;
  for (std::int64_t j = 0; j < b.span; ++j) bad += buf.scratch[j] != buf.expected[j];
  return bad;
}

void round_trip(int rank, const Built& b, const Buffers& buf) {
  const int peer = 1 - rank;
  if (rank == 0) {
    MPI_CHECK(MPI_Send(buf.send_obj, 1, b.type, peer, kTag, MPI_COMM_WORLD));
    MPI_CHECK(MPI_Recv(buf.recv_obj, 1, b.type, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  } else {
    MPI_CHECK(MPI_Recv(buf.recv_obj, 1, b.type, peer, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_CHECK(MPI_Send(buf.send_obj, 1, b.type, peer, kTag, MPI_COMM_WORLD));
  }
}

using strider::bench::methods_between;
using strider::bench::StatsBox;

struct Series {
  const char* method = "";
  bool usable = false;       // the method was accepted on both ranks
  int samples = 0;           // timed round trips (decided on rank 0, broadcast)
  std::vector<double> half;  // half round trips, us (rank 0's clock)
  double median_us = kNaN, p10_us = kNaN, p90_us = kNaN;
  long long wrong = 0;  // bytes wrong on both receivers (all ranks)
  std::string ran;      // what Strider did, "r0|r1" where the ranks differ (rank 0)
};

// Sets `method` on both ranks; false (on both) if either refused it.
bool set_method_everywhere(const Ctx& ctx, const char* method) {
  int ok = ctx.set_method(method) == 0 ? 1 : 0;
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  if (!ok && ctx.rank == 0) std::fprintf(stderr, "strider_set_method(\"%s\") refused\n", method);
  return ok != 0;
}

// What ran on each rank between two snapshots, gathered on rank 0.
std::string gather_ran(const Ctx& ctx, const StatsBox& before, const StatsBox& after) {
  char mine[64] = {}, both[2][64] = {};
  std::snprintf(mine, sizeof mine, "%s",
                ctx.get_stats ? methods_between(before.s, after.s).c_str() : "n/a");
  MPI_CHECK(MPI_Gather(mine, 64, MPI_CHAR, both, 64, MPI_CHAR, 0, MPI_COMM_WORLD));
  if (ctx.rank != 0) return "";
  both[0][63] = both[1][63] = '\0';
  std::string ran = both[0];
  if (std::strcmp(both[0], both[1]) != 0) ran = ran + "|" + both[1];
  return ran;
}

// One method, untimed: a verified round trip into a freshly poisoned buffer, then warm-up round
// trips that size the timed count (on rank 0, from the budget). Records what Strider ran.
void verify_and_size(const Ctx& ctx, const Built& b, std::uint64_t poison_seed, Series& s) {
  s.usable = set_method_everywhere(ctx, s.method);
  if (!s.usable) return;
  Buffers& buf = *ctx.buf;
  StatsBox before, after;
  if (ctx.get_stats) ctx.get_stats(&before.s, sizeof before.s);
  device_fill(buf.recv_obj, b.span, poison_seed, buf.grid);
  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  round_trip(ctx.rank, b, buf);
  long long wrong = count_wrong(b, buf);
  MPI_CHECK(MPI_Allreduce(&wrong, &s.wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));

  MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  const double w0 = now_us();
  for (int i = 0; i < ctx.opt.warmup; ++i) round_trip(ctx.rank, b, buf);
  const double per_round_us = (now_us() - w0) / ctx.opt.warmup;
  if (ctx.get_stats) ctx.get_stats(&after.s, sizeof after.s);
  s.ran = gather_ran(ctx, before, after);
  int n = ctx.opt.iters;
  if (ctx.rank == 0) {
    const double fit = ctx.opt.budget_ms * 1e3 / std::max(per_round_us, 1e-3);
    n = static_cast<int>(std::min(static_cast<double>(ctx.opt.iters),
                                  std::max(static_cast<double>(ctx.opt.min_iters), fit)));
  }
  MPI_CHECK(MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD));
  s.samples = n;
  s.half.reserve(static_cast<std::size_t>(n));
}

// Timed round trips of every usable method, interleaved in kRounds rounds (each round re-sets
// the method and makes one untimed round trip first), so that drift of the machine (other
// load, clocks, memory placement) spreads over all methods instead of biasing the one that ran
// during it: the regret compares methods whose times differ by a few percent.
constexpr int kRounds = 5;

void time_interleaved(const Ctx& ctx, const Built& b, std::vector<Series>& series) {
  for (int round = 0; round < kRounds; ++round) {
    for (Series& s : series) {
      if (!s.usable) continue;
      const int first = s.samples * round / kRounds, last = s.samples * (round + 1) / kRounds;
      if (first == last || !set_method_everywhere(ctx, s.method)) continue;
      round_trip(ctx.rank, b, *ctx.buf);
      MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
      for (int i = first; i < last; ++i) {
        const double t0 = now_us();
        round_trip(ctx.rank, b, *ctx.buf);
        s.half.push_back((now_us() - t0) / 2);
      }
    }
  }
  for (Series& s : series) {
    if (s.half.empty()) continue;
    std::sort(s.half.begin(), s.half.end());
    auto at = [&s](double q) {
      return s.half[static_cast<std::size_t>(q * static_cast<double>(s.half.size() - 1) + 0.5)];
    };
    s.median_us = s.half[s.half.size() / 2];
    s.p10_us = at(0.1);
    s.p90_us = at(0.9);
  }
}

// Every method of `methods` on one case: verified and sized one after the other, then timed
// interleaved.
std::vector<Series> measure_case(const Ctx& ctx, const Built& b, std::uint64_t poison_seed,
                                 const std::vector<const char*>& methods) {
  std::vector<Series> series(methods.size());
  for (std::size_t i = 0; i < methods.size(); ++i) {
    series[i].method = methods[i];
    verify_and_size(ctx, b, poison_seed, series[i]);
  }
  time_interleaved(ctx, b, series);
  return series;
}

// ---------------------------------------------------------------------------------------------
// Results.

struct Row {
  std::uint64_t id = 0;
  Case c;
  Built b;
  double measured[kFixed] = {kNaN, kNaN, kNaN};   // us, NaN: not measured
  double predicted[kFixed] = {kNaN, kNaN, kNaN};  // us, NaN: not available / no prediction
  double auto_us = kNaN;
  // Spread of the timed round trips, us: the fixed methods, then auto (index kFixed).
  double p10[kFixed + 1] = {kNaN, kNaN, kNaN, kNaN};
  double p90[kFixed + 1] = {kNaN, kNaN, kNaN, kNaN};
  std::string send_choice = "n/a", recv_choice = "n/a", auto_ran;
  std::string fastest;  // of the fixed methods and auto, measured
  std::string predicted_fastest = "n/a";
  double regret = kNaN;
  long long wrong = 0;
  int measured_model = -1;  // strider_prediction::measured; -1: no prediction
};

// STRIDER_ONESHOT / _STAGED / _DEVICE for a fixed method's name; -1 for "auto".
int method_index(const char* name) {
  for (int m = 0; m < kFixed; ++m) {
    if (std::strcmp(name, kMethodNames[m]) == 0) return m;
  }
  return -1;
}

const char* choice_name(int c) { return c >= 0 && c < kFixed ? kMethodNames[c] : "?"; }

// Fastest measured (fixed methods and auto) and auto's regret against it, clamped at >= 0.
void score(Row& r) {
  double best = r.auto_us;
  r.fastest = "auto";
  for (int m = 0; m < kFixed; ++m) {
    if (!std::isnan(r.measured[m]) && !(r.measured[m] >= best)) {
      best = r.measured[m];
      r.fastest = kMethodNames[m];
    }
  }
  r.regret = std::isnan(r.auto_us) ? kNaN : std::max(0.0, r.auto_us / best - 1);
}

std::string csv_num(double v, const char* fmt = "%.3f") {
  return std::isnan(v) ? "" : format(fmt, v);
}

std::string case_label(const Row& r) {
  return format("#%llu %s block %lld stride %lld %s%s", static_cast<unsigned long long>(r.id),
                shape_name(r.c.shape), static_cast<long long>(r.c.block),
                static_cast<long long>(r.b.stride), size_label(r.b.bytes).c_str(),
                r.c.shape == Shape::Indexed ? " (mean block)" : "");
}

void write_csv_header(FILE* f) {
  std::fprintf(f,
               "case,shape,dims,irregular,block,stride,ratio,blocks,inner,bytes,span,oneshot_us,"
               "staged_us,device_us,auto_us,pred_oneshot_us,pred_staged_us,pred_device_us,"
               "auto_send_choice,auto_recv_choice,auto_ran,fastest_method,predicted_fastest,"
               "auto_regret,within10,wrong_bytes,pred_measured,oneshot_p10_us,oneshot_p90_us,"
               "staged_p10_us,staged_p90_us,device_p10_us,device_p90_us,auto_p10_us,"
               "auto_p90_us\n");
}

void write_csv_row(FILE* f, const Row& r) {
  std::fprintf(f, "%llu,%s,%d,%d,%lld,%lld,%d,%lld,%lld,%lld,%lld",
               static_cast<unsigned long long>(r.id), shape_name(r.c.shape), r.b.dims,
               r.c.shape == Shape::Indexed ? 1 : 0, static_cast<long long>(r.c.block),
               static_cast<long long>(r.b.stride), r.c.ratio, static_cast<long long>(r.b.blocks),
               static_cast<long long>(r.b.inner), static_cast<long long>(r.b.bytes),
               static_cast<long long>(r.b.span));
  for (double v : r.measured) std::fprintf(f, ",%s", csv_num(v).c_str());
  std::fprintf(f, ",%s", csv_num(r.auto_us).c_str());
  for (double v : r.predicted) std::fprintf(f, ",%s", csv_num(v).c_str());
  std::fprintf(f, ",%s,%s,%s,%s,%s,%s,%s,%lld,%d", r.send_choice.c_str(), r.recv_choice.c_str(),
               r.auto_ran.c_str(), r.fastest.c_str(), r.predicted_fastest.c_str(),
               csv_num(r.regret, "%.4f").c_str(),
               std::isnan(r.regret) ? "" : (r.regret <= kGoalRegret ? "1" : "0"), r.wrong,
               r.measured_model);
  for (int m = 0; m <= kFixed; ++m) {
    std::fprintf(f, ",%s,%s", csv_num(r.p10[m]).c_str(), csv_num(r.p90[m]).c_str());
  }
  std::fprintf(f, "\n");
  std::fflush(f);
}

double median(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// |predicted / measured - 1| per method over `rows` that pass `keep`.
std::string error_lines(const std::vector<Row>& rows, bool (*keep)(const Row&), const char* what) {
  std::string out;
  for (int m = 0; m < kFixed; ++m) {
    std::vector<double> err, ratio;
    const Row* worst = nullptr;
    double worst_err = -1;
    for (const Row& r : rows) {
      if (!keep(r) || std::isnan(r.measured[m]) || std::isnan(r.predicted[m])) continue;
      ratio.push_back(r.predicted[m] / r.measured[m]);
      const double e = std::fabs(ratio.back() - 1);
      err.push_back(e);
      if (e > worst_err) {
        worst_err = e;
        worst = &r;
      }
    }
    if (err.empty()) {
      out += format("  %-7s %-9s: no cases with both a measurement and a prediction\n",
                    kMethodNames[m], what);
      continue;
    }
    out += format(
        "  %-7s %-9s: |predicted/measured - 1| median %.3f, max %.3f (%s: %.1f us "
        "predicted, %.1f us measured); median predicted/measured %.3f; %zu cases\n",
        kMethodNames[m], what, median(err), worst_err, case_label(*worst).c_str(),
        worst->predicted[m], worst->measured[m], median(ratio), err.size());
  }
  return out;
}

bool any_row(const Row&) { return true; }
bool regular_row(const Row& r) { return r.c.shape != Shape::Indexed; }
bool irregular_row(const Row& r) { return r.c.shape == Shape::Indexed; }

// Run-to-run noise: where auto ran one fixed method on both ranks and both sides, its time and
// that method's measure the same thing; how far they differ bounds what a regret can resolve.
std::string noise_line(const std::vector<Row>& rows) {
  std::vector<double> diff;
  const Row* worst = nullptr;
  double worst_diff = -1;
  for (const Row& r : rows) {
    const int m = method_index(r.auto_ran.c_str());
    if (m < 0 || std::isnan(r.measured[m]) || std::isnan(r.auto_us)) continue;
    diff.push_back(std::fabs(r.auto_us / r.measured[m] - 1));
    if (diff.back() > worst_diff) {
      worst_diff = diff.back();
      worst = &r;
    }
  }
  if (diff.empty()) return "noise: no case where auto ran a single fixed method\n";
  std::vector<double> sorted = diff;
  std::sort(sorted.begin(), sorted.end());
  const double p90 =
      sorted[static_cast<std::size_t>(0.9 * static_cast<double>(sorted.size() - 1) + 0.5)];
  return format(
      "noise: in %zu cases auto ran one fixed method throughout; |auto / that method - "
      "1| median %.3f, p90 %.3f, max %.3f (%s: auto %.1f us, %s %.1f us)\n",
      diff.size(), median(diff), p90, worst_diff, case_label(*worst).c_str(), worst->auto_us,
      worst->auto_ran.c_str(), worst->measured[method_index(worst->auto_ran.c_str())]);
}

std::string summary(const std::vector<Row>& rows, const std::string& header, double seconds) {
  std::string s = header;
  int scored = 0, within = 0, wrong_cases = 0, model_agrees = 0, model_scored = 0;
  int from_file = 0, from_defaults = 0, no_prediction = 0;
  const Row* worst = nullptr;
  for (const Row& r : rows) {
    wrong_cases += r.wrong != 0;
    if (r.measured_model < 0)
      ++no_prediction;
    else
      (r.measured_model ? from_file : from_defaults)++;
    if (std::isnan(r.regret)) continue;
    ++scored;
    within += r.regret <= kGoalRegret;
    if (worst == nullptr || r.regret > worst->regret) worst = &r;
    // The model's pick among the fixed methods against the measured fastest fixed method.
    int best = -1;
    for (int m = 0; m < kFixed; ++m) {
      if (!std::isnan(r.measured[m]) && (best < 0 || r.measured[m] < r.measured[best])) best = m;
    }
    if (best >= 0 && r.predicted_fastest != "n/a") {
      ++model_scored;
      model_agrees += r.predicted_fastest == kMethodNames[best];
    }
  }
  s += format("cases: %zu (%d irregular), %.1f s; cases with wrong data: %d\n", rows.size(),
              static_cast<int>(std::count_if(rows.begin(), rows.end(), irregular_row)), seconds,
              wrong_cases);
  if (scored > 0) {
    const double fraction = static_cast<double>(within) / scored;
    s += format(
        "auto within %.0f%% of the fastest measured (fixed methods and auto): %d of %d = "
        "%.1f%% (goal >= %.0f%%: %s)\n",
        kGoalRegret * 100, within, scored, fraction * 100, kGoalFraction * 100,
        fraction >= kGoalFraction ? "MET" : "NOT MET");
    s += format(
        "worst auto regret: %.3f (%s: auto %.1f us, fastest %s; auto chose send %s, "
        "recv %s)\n",
        worst->regret, case_label(*worst).c_str(), worst->auto_us, worst->fastest.c_str(),
        worst->send_choice.c_str(), worst->recv_choice.c_str());
    std::vector<double> regrets;
    for (const Row& r : rows) {
      if (!std::isnan(r.regret)) regrets.push_back(r.regret);
    }
    s += format("median auto regret: %.4f\n", median(regrets));
    s += noise_line(rows);
  }
  if (model_scored > 0) {
    s += format("model's fastest fixed method = measured fastest fixed method: %d of %d\n",
                model_agrees, model_scored);
  }
  s += "prediction error per method:\n";
  s += error_lines(rows, any_row, "all");
  s += error_lines(rows, regular_row, "regular");
  s += error_lines(rows, irregular_row, "irregular");
  s += format("predictions from: perf file %d cases, built-in defaults %d, none (no plan) %d\n",
              from_file, from_defaults, no_prediction);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Set-up.

// Rank 0's prediction for `b`; fills the row's prediction fields.
void predict_row(Predict predict, int same_node, Row& r) {
  strider_prediction p{};
  if (predict(r.b.type, 1, same_node, &p) != 0) return;
  r.measured_model = p.measured;
  int best = -1;
  for (int m = 0; m < kFixed; ++m) {
    if (!p.available[m]) continue;
    r.predicted[m] = p.total[m] * 1e6;
    if (best < 0 || p.total[m] < p.total[best]) best = m;
  }
  r.predicted_fastest = best >= 0 ? kMethodNames[best] : "n/a";
  r.send_choice = choice_name(p.send_choice);
  r.recv_choice = choice_name(p.recv_choice);
}

// Whether both ranks share a node (the placement strider_predict is asked about).
int same_node() {
  MPI_Comm node;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int size = 0;
  MPI_CHECK(MPI_Comm_size(node, &size));
  MPI_CHECK(MPI_Comm_free(&node));
  return size == 2 ? 1 : 0;
}

int local_rank() {
  MPI_Comm node;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int r = 0;
  MPI_CHECK(MPI_Comm_rank(node, &r));
  MPI_CHECK(MPI_Comm_free(&node));
  return r;
}

// Whether the CUDA-aware device method can be measured: strider_predict on a small vector type.
bool device_available(Predict predict, int same) {
  MPI_Datatype t;
  MPI_CHECK(MPI_Type_vector(16, 4, 8, MPI_BYTE, &t));
  MPI_CHECK(MPI_Type_commit(&t));
  strider_prediction p{};
  int avail = predict(t, 1, same, &p) == 0 && p.available[STRIDER_DEVICE] ? 1 : 0;
  MPI_CHECK(MPI_Type_free(&t));
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &avail, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  return avail != 0;
}

// Rank 0 opens the CSV (creating DIR); false on every rank if it could not.
bool open_outputs(int rank, const Options& opt, FILE*& csv) {
  int ok = 1;
  if (rank == 0) {
    std::error_code ec;
    std::filesystem::create_directories(opt.out_dir, ec);
    const std::string path = opt.out_dir + "/validation.csv";
    csv = std::fopen(path.c_str(), "w");
    if (csv == nullptr) {
      std::perror(path.c_str());
      ok = 0;
    }
  }
  MPI_CHECK(MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD));
  return ok != 0;
}

// Finds Strider's API and a GPU on every rank; prints what is missing on rank 0.
bool environment_ok(int rank, SetMethod& set_method, Predict& predict, GetStats& get_stats) {
  set_method = reinterpret_cast<SetMethod>(dlsym(RTLD_DEFAULT, "strider_set_method"));
  predict = reinterpret_cast<Predict>(dlsym(RTLD_DEFAULT, "strider_predict"));
  get_stats = reinterpret_cast<GetStats>(dlsym(RTLD_DEFAULT, "strider_get_stats_sized"));
  int flags[2] = {set_method != nullptr && predict != nullptr ? 1 : 0, 0};
  int ndev = 0;
  flags[1] = cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0 ? 1 : 0;
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  if (rank == 0 && !flags[0]) {
    std::fprintf(stderr,
                 "validate: strider_set_method / strider_predict not found on every rank: run "
                 "with LD_PRELOAD=<build>/src/libstrider.so (a libstrider with strider_predict)\n");
  }
  if (rank == 0 && !flags[1]) {
    std::fprintf(stderr, "validate: no CUDA device on every rank; nothing measured\n");
  }
  return flags[0] && flags[1];
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (const int parsed = parse_args(argc, argv, opt); parsed != 0) return parsed == 1 ? 0 : 2;
  MPI_CHECK(MPI_Init(&argc, &argv));
  int rank = 0, size = 0;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "validate: needs exactly 2 ranks, not %d\n", size);
    MPI_Finalize();
    return 2;
  }
  Ctx ctx;
  ctx.rank = rank;
  ctx.opt = opt;
  Predict predict = nullptr;
  if (!environment_ok(rank, ctx.set_method, predict, ctx.get_stats)) {
    MPI_Finalize();
    return 2;
  }
  int ndev = 0;
  CUDA_CHECK(cudaGetDeviceCount(&ndev));
  const int device = local_rank() % ndev;
  CUDA_CHECK(cudaSetDevice(device));
  CUDA_CHECK(cudaFree(nullptr));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));

  FILE* csv = nullptr;
  if (!open_outputs(rank, opt, csv)) {
    MPI_Finalize();
    return 2;
  }
  const int same = same_node();
  const bool with_device = device_available(predict, same);
  const std::vector<Case> cases = held_back_cases(opt.quick);
  // The fixed methods (device only on a CUDA-aware MPI: elsewhere it runs as staged), then auto.
  std::vector<const char*> methods = {kMethodNames[STRIDER_ONESHOT], kMethodNames[STRIDER_STAGED]};
  if (with_device) methods.push_back(kMethodNames[STRIDER_DEVICE]);
  methods.push_back("auto");

  // Buffers sized once for the largest case.
  std::int64_t largest = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) largest = std::max(largest, span_of(cases[i], i));
  Buffers buf;
  buf.grid = prop.multiProcessorCount * 8;
  CUDA_CHECK(cudaMalloc(&buf.send_obj, static_cast<std::size_t>(largest)));
  CUDA_CHECK(cudaMalloc(&buf.recv_obj, static_cast<std::size_t>(largest)));
  ctx.buf = &buf;

  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  const char* perf_env = std::getenv("STRIDER_PERF_FILE");
  const std::string header = format(
      "bench/validate on %s, %s, %s, ranks on %s; STRIDER_PERF_FILE=%s; device method %s; %zu "
      "held-back cases, at most %d round trips / %.0f ms per method, interleaved in %d rounds\n",
      prop.name, mpi_name(), date, same ? "one node" : "two nodes", perf_env ? perf_env : "(unset)",
      with_device ? "measured (CUDA-aware MPI)" : "not available (MPI not CUDA-aware)",
      cases.size(), opt.iters, opt.budget_ms, kRounds);
  if (rank == 0) {
    std::printf("%s", header.c_str());
    std::printf("%-52s %9s %9s %9s %9s | %9s %9s %9s | %-15s %-16s %7s\n", "case", "oneshot",
                "staged", "device", "auto", "p_oneshot", "p_staged", "p_device", "auto send/recv",
                "auto ran", "regret");
    write_csv_header(csv);
  }

  std::vector<Row> rows;
  const double start = now_us();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    Row r;
    r.id = i;
    r.c = cases[i];
    r.b = build(cases[i], i);
    const std::uint64_t mine = case_seed(i, rank), theirs = case_seed(i, 1 - rank);
    const std::uint64_t poison = case_seed(i, 2 + rank);
    device_fill(buf.send_obj, r.b.span, mine, buf.grid);
    build_expected(r.b, buf, theirs, poison);
    if (rank == 0) predict_row(predict, same, r);
    for (const Series& s : measure_case(ctx, r.b, poison, methods)) {
      r.wrong += s.wrong;
      const int m = method_index(s.method);
      r.p10[m >= 0 ? m : kFixed] = s.p10_us;
      r.p90[m >= 0 ? m : kFixed] = s.p90_us;
      if (m >= 0) {
        r.measured[m] = s.median_us;
      } else {
        r.auto_us = s.median_us;
        r.auto_ran = s.ran;
      }
    }
    MPI_CHECK(MPI_Type_free(&r.b.type));
    if (rank != 0) continue;
    score(r);
    write_csv_row(csv, r);
    std::printf("%-52s %9s %9s %9s %9s | %9s %9s %9s | %-15s %-16s %7s%s\n", case_label(r).c_str(),
                csv_num(r.measured[0], "%.1f").c_str(), csv_num(r.measured[1], "%.1f").c_str(),
                csv_num(r.measured[2], "%.1f").c_str(), csv_num(r.auto_us, "%.1f").c_str(),
                csv_num(r.predicted[0], "%.1f").c_str(), csv_num(r.predicted[1], "%.1f").c_str(),
                csv_num(r.predicted[2], "%.1f").c_str(),
                (r.send_choice + "/" + r.recv_choice).c_str(), r.auto_ran.c_str(),
                csv_num(r.regret, "%.3f").c_str(), r.wrong ? "  WRONG DATA" : "");
    std::fflush(stdout);
    rows.push_back(r);
  }
  set_method_everywhere(ctx, "auto");

  long long wrong_cases = 0;
  if (rank == 0) {
    std::fclose(csv);
    for (const Row& r : rows) wrong_cases += r.wrong != 0;
    const std::string text = summary(rows, header, (now_us() - start) * 1e-6);
    std::printf("\n%s", text.c_str());
    const std::string path = opt.out_dir + "/validation_summary.txt";
    FILE* f = std::fopen(path.c_str(), "w");
    bool written = f != nullptr && std::fputs(text.c_str(), f) >= 0;
    if (f != nullptr) written = std::fclose(f) == 0 && written;
    if (!written) std::perror(path.c_str());
    std::printf("CSV: %s/validation.csv; summary: %s\n", opt.out_dir.c_str(), path.c_str());
  }
  MPI_CHECK(MPI_Bcast(&wrong_cases, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
  CUDA_CHECK(cudaFree(buf.send_obj));
  CUDA_CHECK(cudaFree(buf.recv_obj));
  MPI_CHECK(MPI_Finalize());
  return wrong_cases != 0 ? 1 : 0;
}
