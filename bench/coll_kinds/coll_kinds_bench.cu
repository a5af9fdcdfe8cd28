// bench/coll_kinds: what one blocking collective costs per call, by the memory kind each rank's
// buffers live in, the way a datatype test suite calls it (issue 20, item 3).
//
// Why: an external GPU suite's MPI_Bcast of DTPools-style derived types (counts up to 65,530),
// with managed memory on even ranks and registered host memory (malloc + cudaHostRegister) on
// odd ranks, took 37.7 s on 2 GPUs and over 45 s on 4, against 5.7 s host<->host and 32 s
// device<->device. This program tells what each call costs on each memory kind, and whether
// anything waits that should not: per call, next to the same call on host memory (measured in
// the same run), with what Strider did on each rank (same-node IPC, packed through host memory,
// or forwarded to the MPI).
//
// What: N ranks (2 or 4; any N >= 2 runs), one GPU each (local rank % GPUs; --one-gpu: all on
// GPU 0). For each collective (MPI_Bcast, MPI_Allgather, MPI_Allreduce with MPI_SUM), type
// (contiguous MPI_INT; a vector of `count` blocks of B ints, stride 2B; an indexed type of
// `count` irregular blocks; a struct {int, double} resized, `count` of them; a 3D subarray,
// `count` of them; Allreduce: contiguous MPI_INT and MPI_DOUBLE only, as Open MPI 4.1 refuses
// predefined ops on derived types), element count (1, 17, 1024, 65530; every buffer's span
// capped at --max-bytes, the count lowered to fit) and layout of memory kinds (--kinds
// managed,registered: even ranks managed, odd ranks registered; rank r takes the (r % n)-th
// kind of the list), it times calls with the application's pattern around them (--touch):
//   host:   before each call the writers (the root of a Bcast, every rank's send buffer
//           otherwise) write new random data on the host (through a host copy and cudaMemcpy
//           for device memory), and after it every rank reads its buffers on the host to verify
//           them (as a test suite does: managed pages migrate back and forth);
//   device: the writers fill with a kernel (host memory: a kernel into a device mirror, then
//           cudaMemcpy), every rank verifies after a cudaMemcpy of its buffers to the host;
//   none:   data written once; verified once at the end.
// Each timed call: MPI_Barrier, host wall clock around the call on every rank; a sample is the
// slowest rank's time. Median, p10, p90 over the timed calls after warm-up (fills and checks
// are outside the timed region; their medians are reported beside it). Every case ends with a
// check of every byte of every buffer (data and gaps; send buffers unchanged).
//
// Writes one CSV row per (collective, type, count, kinds, touch) and a table on stdout, with
// Strider's counters per call (summed over ranks) when Strider is preloaded (found by dlsym,
// so the same binary measures the MPI alone: then layouts with device memory are skipped, as
// the MPI is not CUDA-aware). Without a GPU only host-memory layouts run (--kinds host);
// anything else prints "no GPU: nothing measured" and exits 0. CSV columns beyond the obvious:
// packed_bytes: count x type size (one rank's data; bytes_per_us = packed_bytes / median_us);
// kinds: the layout, '/'-separated; host_median_us / vs_host: the host/host call of the same
// case and the ratio to it; first_us: the first (cold) call; fill_us / check_us: the slowest
// rank's median fill and check; rank_median_us: each rank's own median call time; path: per
// rank what Strider did (ipc: same-node GPU to GPU, packed: its wires through host memory or
// host mirrors, mpi: forwarded unchanged; '-' without Strider); errors: wrong values and bytes;
// span_bytes: the largest buffer; env: the STRIDER_ variables set; then Strider's counters per
// call, summed over ranks (served counts same_node calls too; pool_allocs > 0 in the steady
// state means allocations inside the calls).
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../common/cuda_check.hpp"
#include "../common/exchange_common.hpp"
#include "../common/mpi_check.hpp"
#include "../common/mpi_name.hpp"
#include "strider/strider.h"

namespace {

using strider::bench::mpi_name;
using strider::bench::now_us;
using strider::bench::summarize;
using strider::bench::Summary;

constexpr std::int64_t kGuard = 64;  // bytes past each buffer's elements that must stay untouched
const std::vector<int> kCounts = {1, 17, 1024, 65530};
const std::vector<int> kQuickCounts = {1, 65530};

// ---------------------------------------------------------------------------------------------
// Memory kinds and layouts.

enum class Kind { Device, Managed, Registered, Host, Pinned };
constexpr const char* kKindNames[] = {"device", "managed", "registered", "host", "pinned"};

const char* kind_name(Kind k) { return kKindNames[static_cast<int>(k)]; }
bool host_access(Kind k) { return k != Kind::Device; }  // the CPU may read and write it
bool kernel_access(Kind k) { return k != Kind::Host; }  // a kernel may read and write it

bool parse_kind(const std::string& s, Kind& k) {
  for (int i = 0; i < 5; ++i) {
    if (s == kKindNames[i]) {
      k = static_cast<Kind>(i);
      return true;
    }
  }
  return false;
}

// Rank r's buffers live in kinds[r % kinds.size()].
struct Layout {
  std::vector<Kind> kinds;
  Kind of(int rank) const { return kinds[static_cast<std::size_t>(rank) % kinds.size()]; }
  bool all_host() const {
    return std::all_of(kinds.begin(), kinds.end(), [](Kind k) { return k == Kind::Host; });
  }
  bool any(Kind want) const { return std::find(kinds.begin(), kinds.end(), want) != kinds.end(); }
  std::string name(char sep) const {
    std::string s;
    for (Kind k : kinds) {
      if (!s.empty()) s += sep;
      s += kind_name(k);
    }
    return s;
  }
  bool operator==(const Layout& o) const { return kinds == o.kinds; }
};

enum class Touch { Host, None, Device };
constexpr const char* kTouchNames[] = {"host", "none", "device"};
enum class Coll { Bcast, Allgather, Allreduce };
constexpr const char* kCollNames[] = {"bcast", "allgather", "allreduce"};

// ---------------------------------------------------------------------------------------------
// Options.

struct Options {
  bool quick = false, one_gpu = false;
  std::string out = "coll_kinds.csv";
  std::vector<Layout> layouts;
  std::vector<Coll> colls;
  std::vector<Touch> touches;
  std::vector<std::string> types;  // names as given: int, double, vector[:B], indexed, ...
  std::vector<int> counts;
  int iters = 0, min_iters = 0, warmup = 0, root = 0;
  double budget_ms = 0, time_limit_s = 0;
  std::int64_t max_bytes = std::int64_t{64} << 20;
};

void usage(const char* argv0) {
  std::printf(
      "usage: mpirun -n 2|4 %s [options]\n"
      "Times MPI_Bcast / MPI_Allgather / MPI_Allreduce per call on derived types, by memory kind\n"
      "per rank, with a test suite's host fills and checks around each call. Preload\n"
      "libstrider.so to measure Strider (its counters per call are reported); without it,\n"
      "layouts with device memory are skipped (the MPI is not CUDA-aware).\n"
      "  --kinds L [L..]   layouts, each KIND[,KIND..]: rank r uses the (r %% n)-th kind;\n"
      "                    KIND: device managed registered host pinned; several layouts as\n"
      "                    separate words, ';'-separated or by repeating --kinds (default:\n"
      "                    managed,registered device,registered managed,managed device,device\n"
      "                    host,host). host,host is always measured too: the baseline.\n"
      "  --colls LIST      bcast,allgather,allreduce (default all)\n"
      "  --touch LIST      host,none,device (default host): who writes before and reads after\n"
      "                    each call (see the header of coll_kinds_bench.cu)\n"
      "  --types LIST      int,vector[:B],indexed,struct,subarray,double (default: the first\n"
      "                    five for bcast/allgather, vector with B=4; allreduce: int,double)\n"
      "  --counts LIST     element counts (default 1,17,1024,65530; --quick 1,65530)\n"
      "  --iters N         at most N timed calls per case (default 200; --quick 10)\n"
      "  --budget-ms MS    stop a case's timed calls after about MS ms, never below\n"
      "                    min(N, 10) (--quick: 3) calls (default 250; --quick 30)\n"
      "  --warmup N        untimed calls first, at least 1 (default 3; --quick 1)\n"
      "  --root R          root of the Bcast (default 0)\n"
      "  --max-bytes B     largest span of one buffer, suffix K/M/G (default 64M)\n"
      "  --time-limit S    start no new case after S s (default: none; --quick 45)\n"
      "  --one-gpu         every rank on GPU 0 (default: local rank %% GPUs)\n"
      "  --quick           counts 1,65530, few calls, 45 s at most: under a minute on 2 GPUs\n"
      "  --out FILE        CSV output (default coll_kinds.csv), written by rank 0\n"
      "Exit status: 0 done (or no GPU: nothing measured), 1 wrong data or a CUDA error, 2 a\n"
      "usage error (bad option, fewer than 2 ranks, CSV not writable).\n",
      argv0);
}

// Splits `text` at any of `seps`, dropping empty items.
std::vector<std::string> split(const std::string& text, const char* seps) {
  std::vector<std::string> out;
  std::string item;
  for (char c : text) {
    if (std::strchr(seps, c) != nullptr) {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  if (!item.empty()) out.push_back(item);
  return out;
}

bool parse_long(const std::string& s, long lo, long hi, long& v) {
  char* end = nullptr;
  v = std::strtol(s.c_str(), &end, 10);
  return !s.empty() && *end == '\0' && v >= lo && v <= hi;
}

bool parse_bytes(const std::string& s, std::int64_t& v) {
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  double mul = 1;
  if (*end == 'K' || *end == 'k') mul = 1024.0, ++end;
  if (*end == 'M' || *end == 'm') mul = 1024.0 * 1024, ++end;
  if (*end == 'G' || *end == 'g') mul = 1024.0 * 1024 * 1024, ++end;
  if (end == s.c_str() || *end != '\0' || !(x * mul >= 1024) || x * mul > 1e12) return false;
  v = static_cast<std::int64_t>(x * mul);
  return true;
}

// 0: run; 1: --help printed; 2: usage error printed.
int parse_args(int argc, char** argv, Options& opt) {
  bool iters_set = false, budget_set = false, warmup_set = false, limit_set = false;
  auto words = [&](int& i) {  // the words after argv[i] up to the next option
    std::string all;
    while (i + 1 < argc && std::strncmp(argv[i + 1], "--", 2) != 0)
      all += std::string(" ") + argv[++i];
    return all;
  };
  auto bad = [](const char* what, const std::string& v) {
    std::fprintf(stderr, "%s: bad value '%s' (see --help)\n", what, v.c_str());
    return 2;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage(argv[0]);
      return 1;
    } else if (a == "--quick") {
      opt.quick = true;
    } else if (a == "--one-gpu") {
      opt.one_gpu = true;
    } else if (a == "--out" && i + 1 < argc) {
      opt.out = argv[++i];
    } else if (a == "--kinds") {
      const std::string all = words(i);
      for (const std::string& l : split(all, " ;")) {
        Layout layout;
        for (const std::string& k : split(l, ",")) {
          Kind kind;
          if (!parse_kind(k, kind)) return bad("--kinds", k);
          layout.kinds.push_back(kind);
        }
        if (std::find(opt.layouts.begin(), opt.layouts.end(), layout) == opt.layouts.end()) {
          opt.layouts.push_back(layout);
        }
      }
      if (all.empty()) return bad("--kinds", all);
    } else if (a == "--colls") {
      const std::string all = words(i);
      for (const std::string& c : split(all, " ,")) {
        const auto at = std::find_if(std::begin(kCollNames), std::end(kCollNames),
                                     [&c](const char* n) { return c == n; });
        if (at == std::end(kCollNames)) return bad("--colls", c);
        const Coll coll = static_cast<Coll>(at - std::begin(kCollNames));
        if (std::find(opt.colls.begin(), opt.colls.end(), coll) == opt.colls.end()) {
          opt.colls.push_back(coll);
        }
      }
      if (opt.colls.empty()) return bad("--colls", all);
    } else if (a == "--touch") {
      const std::string all = words(i);
      for (const std::string& t : split(all, " ,")) {
        const auto at = std::find_if(std::begin(kTouchNames), std::end(kTouchNames),
                                     [&t](const char* n) { return t == n; });
        if (at == std::end(kTouchNames)) return bad("--touch", t);
        const Touch touch = static_cast<Touch>(at - std::begin(kTouchNames));
        if (std::find(opt.touches.begin(), opt.touches.end(), touch) == opt.touches.end()) {
          opt.touches.push_back(touch);
        }
      }
      if (opt.touches.empty()) return bad("--touch", all);
    } else if (a == "--types") {
      const std::string all = words(i);
      for (const std::string& t : split(all, " ,")) {
        long b = 0;
        const bool ok = t == "int" || t == "double" || t == "vector" || t == "indexed" ||
                        t == "struct" || t == "subarray" ||
                        (t.rfind("vector:", 0) == 0 && parse_long(t.substr(7), 1, 16, b));
        if (!ok) return bad("--types", t);
        opt.types.push_back(t == "vector" ? "vector:4" : t);
      }
      if (opt.types.empty()) return bad("--types", all);
    } else if (a == "--counts") {
      const std::string all = words(i);
      for (const std::string& c : split(all, " ,")) {
        long v = 0;
        if (!parse_long(c, 1, 1 << 26, v)) return bad("--counts", c);
        opt.counts.push_back(static_cast<int>(v));
      }
      if (opt.counts.empty()) return bad("--counts", all);
    } else if ((a == "--iters" || a == "--warmup" || a == "--root") && i + 1 < argc) {
      long v = 0;
      if (!parse_long(argv[++i], a == "--iters" ? 1 : 0, 100000000, v))
        return bad(argv[i - 1], argv[i]);
      (a == "--iters" ? opt.iters : a == "--warmup" ? opt.warmup : opt.root) = static_cast<int>(v);
      iters_set |= a == "--iters";
      warmup_set |= a == "--warmup";
    } else if ((a == "--budget-ms" || a == "--time-limit") && i + 1 < argc) {
      char* end = nullptr;
      const double v = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(v > 0) || v > 1e8) return bad(argv[i - 1], argv[i]);
      (a == "--budget-ms" ? opt.budget_ms : opt.time_limit_s) = v;
      budget_set |= a == "--budget-ms";
      limit_set |= a == "--time-limit";
    } else if (a == "--max-bytes" && i + 1 < argc) {
      if (!parse_bytes(argv[++i], opt.max_bytes)) return bad("--max-bytes", argv[i]);
    } else {
      std::fprintf(stderr, "unknown or incomplete argument '%s' (see --help)\n", argv[i]);
      return 2;
    }
  }
  if (opt.layouts.empty()) {
    const Kind m = Kind::Managed, r = Kind::Registered, d = Kind::Device, h = Kind::Host;
    opt.layouts = {Layout{{m, r}}, Layout{{d, r}}, Layout{{m, m}}, Layout{{d, d}}, Layout{{h, h}}};
  }
  if (opt.colls.empty()) opt.colls = {Coll::Bcast, Coll::Allgather, Coll::Allreduce};
  if (opt.touches.empty()) opt.touches = {Touch::Host};
  if (opt.counts.empty()) opt.counts = opt.quick ? kQuickCounts : kCounts;
  if (!iters_set) opt.iters = opt.quick ? 10 : 200;
  if (!budget_set) opt.budget_ms = opt.quick ? 30 : 250;
  if (!warmup_set) opt.warmup = opt.quick ? 1 : 3;
  if (!limit_set && opt.quick) opt.time_limit_s = 45;
  opt.min_iters = std::min(opt.iters, opt.quick ? 3 : 10);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Types and data. A case's type is `call_count` elements of `extent` bytes; each element holds
// the basic values ("leaves") at `off` (bytes from the element's start), of kind `leaf`
// (0: int, 1: double). Leaf q of a buffer (counted over its elements, in typemap order) holds a
// value of a hash of (q, seed): the sender and every checker compute it alone.

constexpr std::uint8_t kInt = 0, kDouble = 1;

struct Shape {
  std::string name;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  bool owned = false;  // committed here, freed by release()
  int count = 0;       // the element count the case is labelled with
  int call_count = 0;  // the count passed to the call
  std::int64_t extent = 0, size = 0;
  std::vector<std::int64_t> off;
  std::vector<std::uint8_t> leaf;
  std::int64_t packed() const { return size * call_count; }
  std::int64_t span(int elements) const { return extent * elements + kGuard; }
  void release() {
    if (owned) MPI_Type_free(&type);
    owned = false;
  }
};

__host__ __device__ inline std::uint32_t mix32(std::uint64_t q, std::uint64_t seed) {
  std::uint64_t x = q * 0x9E3779B97F4A7C15ull ^ seed;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return static_cast<std::uint32_t>(x ^ (x >> 31));
}

// Full-range values, or (small: Allreduce) values whose sums over ranks stay exact.
__host__ __device__ inline std::int32_t int_value(std::uint64_t q, std::uint64_t seed, bool small) {
  const std::uint32_t h = mix32(q, seed);
  return small ? static_cast<std::int32_t>(h & 0xFFFFFu) - (1 << 19) : static_cast<std::int32_t>(h);
}

__host__ __device__ inline double double_value(std::uint64_t q, std::uint64_t seed, bool small) {
  const std::uint32_t h = mix32(q, seed ^ 0xD0B1Eull);
  return small ? static_cast<double>(static_cast<std::int32_t>(h & 0x3FFFFFu) - (1 << 21)) * 0.25
               : static_cast<double>(static_cast<std::int32_t>(h)) + 0.5;
}

__host__ __device__ inline void put_leaf(unsigned char* at, std::uint8_t kind, std::uint64_t q,
                                         std::uint64_t seed, bool small) {
  if (kind == kInt) {
    const std::int32_t v = int_value(q, seed, small);
    memcpy(at, &v, sizeof v);
  } else {
    const double v = double_value(q, seed, small);
    memcpy(at, &v, sizeof v);
  }
}

// Leaves [0, elements * leaves) of the elements starting at `base`.
__global__ void fill_kernel(unsigned char* base, std::int64_t elements, std::int64_t leaves,
                            std::int64_t extent, const std::int64_t* off, const std::uint8_t* leaf,
                            std::uint64_t seed, bool small) {
  const std::int64_t n = elements * leaves;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t q = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; q < n;
       q += step) {
    const std::int64_t e = q / leaves, j = q - e * leaves;
    put_leaf(base + e * extent + off[j], leaf[j], static_cast<std::uint64_t>(q), seed, small);
  }
}

// Builds the case's type for `count` elements; `name` as accepted by --types.
Shape make_shape(const std::string& name, int count) {
  Shape s;
  s.name = name;
  s.count = count;
  s.call_count = count;
  auto add = [&s](std::int64_t off, std::uint8_t kind) {
    s.off.push_back(off);
    s.leaf.push_back(kind);
  };
  if (name == "int" || name == "double") {
    s.type = name == "int" ? MPI_INT : MPI_DOUBLE;
    s.extent = name == "int" ? 4 : 8;
    add(0, name == "int" ? kInt : kDouble);
  } else if (name.rfind("vector:", 0) == 0) {
    // count blocks of b ints, stride 2b ints; one element per call.
    const int b = std::atoi(name.c_str() + 7);
    MPI_CHECK(MPI_Type_vector(count, b, 2 * b, MPI_INT, &s.type));
    s.call_count = 1;
    s.extent = (static_cast<std::int64_t>(count - 1) * 2 * b + b) * 4;
    for (std::int64_t i = 0; i < count; ++i) {
      for (int j = 0; j < b; ++j) add((i * 2 * b + j) * 4, kInt);
    }
  } else if (name == "indexed") {
    // count blocks of 1-8 ints with gaps of 1-4 ints, lengths and gaps irregular; one element.
    std::vector<int> len(static_cast<std::size_t>(count)), disp(static_cast<std::size_t>(count));
    std::int64_t at = 0;
    for (int i = 0; i < count; ++i) {
      const std::uint32_t h = mix32(static_cast<std::uint64_t>(i), 0x1D5EEDull);
      len[static_cast<std::size_t>(i)] = 1 + static_cast<int>(h % 8);
      disp[static_cast<std::size_t>(i)] = static_cast<int>(at);
      for (int j = 0; j < len[static_cast<std::size_t>(i)]; ++j) add((at + j) * 4, kInt);
      at += len[static_cast<std::size_t>(i)] + 1 + static_cast<int>((h >> 8) % 4);
    }
    MPI_CHECK(MPI_Type_indexed(count, len.data(), disp.data(), MPI_INT, &s.type));
    s.call_count = 1;
    s.extent = (disp.back() + len.back()) * std::int64_t{4};
  } else if (name == "struct") {
    // struct { int i; double d; }, resized to its C size; count of them.
    const int len[2] = {1, 1};
    const MPI_Aint disp[2] = {0, 8};
    const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Datatype raw;
    MPI_CHECK(MPI_Type_create_struct(2, len, disp, types, &raw));
    MPI_CHECK(MPI_Type_create_resized(raw, 0, 16, &s.type));
    MPI_CHECK(MPI_Type_free(&raw));
    s.extent = 16;
    add(0, kInt);
    add(8, kDouble);
  } else {  // subarray
    // a 2x3x4 box at (1,1,1) of a 4x4x6 int array (C order); count of them.
    const int sizes[3] = {4, 4, 6}, sub[3] = {2, 3, 4}, start[3] = {1, 1, 1};
    MPI_CHECK(MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_INT, &s.type));
    s.extent = 4 * 4 * 6 * 4;
    for (int a = 0; a < sub[0]; ++a) {
      for (int b = 0; b < sub[1]; ++b) {
        for (int c = 0; c < sub[2]; ++c) {
          add((((start[0] + a) * sizes[1] + start[1] + b) * sizes[2] + start[2] + c) * 4, kInt);
        }
      }
    }
  }
  if (s.type != MPI_INT && s.type != MPI_DOUBLE) {
    MPI_CHECK(MPI_Type_commit(&s.type));
    s.owned = true;
  }
  for (std::uint8_t k : s.leaf) s.size += k == kInt ? 4 : 8;
  // The layout written and checked here must be the MPI's.
  int mpi_size = 0;
  MPI_Aint lb = 0, extent = 0;
  MPI_CHECK(MPI_Type_size(s.type, &mpi_size));
  MPI_CHECK(MPI_Type_get_extent(s.type, &lb, &extent));
  if (mpi_size != s.size || lb != 0 || extent != s.extent) {
    std::fprintf(stderr, "coll_kinds: %s(%d): size %d lb %lld extent %lld, expected %lld 0 %lld\n",
                 name.c_str(), count, mpi_size, static_cast<long long>(lb),
                 static_cast<long long>(extent), static_cast<long long>(s.size),
                 static_cast<long long>(s.extent));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return s;
}

// The case's type at `count`, lowered until the largest buffer (`per_buffer` calls' elements)
// spans at most max_bytes.
Shape fitted_shape(const std::string& name, int count, int per_buffer, std::int64_t max_bytes) {
  Shape s = make_shape(name, count);
  while (s.span(per_buffer * s.call_count) > max_bytes && count > 1) {
    const double ratio =
        static_cast<double>(max_bytes) / static_cast<double>(s.span(per_buffer * s.call_count));
    count = std::max(1, std::min(count - 1, static_cast<int>(count * ratio)));
    s.release();
    s = make_shape(name, count);
  }
  return s;
}

// Gap bytes: a pattern of the offset (period 251 bytes, which no stride here divides) and the
// buffer's salt, written a chunk of whole periods at a time.
void poison_fill(unsigned char* dst, std::int64_t bytes, unsigned salt) {
  constexpr std::int64_t kPeriod = 251, kChunk = kPeriod * 256;
  std::vector<unsigned char> chunk(static_cast<std::size_t>(kChunk));
  for (std::int64_t j = 0; j < kChunk; ++j) {
    chunk[static_cast<std::size_t>(j)] =
        static_cast<unsigned char>(((j % kPeriod) * 0x9D + salt * 0x3B + 0x5A) & 0xFF);
  }
  for (std::int64_t at = 0; at < bytes; at += kChunk) {
    std::memcpy(dst + at, chunk.data(), static_cast<std::size_t>(std::min(kChunk, bytes - at)));
  }
}

// One buffer of a rank: `p` is what the MPI call gets, `dev` where kernels write it (nullptr
// if they cannot), `mirror` a device copy for kernel fills of plain host memory, `image` a host
// copy (fills of device memory, checks after cudaMemcpy).
struct Buffer {
  Kind kind = Kind::Host;
  std::int64_t bytes = 0;
  unsigned char* p = nullptr;
  unsigned char* dev = nullptr;
  unsigned char* mirror = nullptr;
  std::vector<unsigned char> image;
  unsigned salt = 0;
};

void buffer_alloc(Buffer& b, Kind kind, std::int64_t bytes, unsigned salt, bool want_mirror) {
  b.kind = kind;
  b.bytes = bytes;
  b.salt = salt;
  const auto n = static_cast<std::size_t>(bytes);
  void* p = nullptr;
  switch (kind) {
    case Kind::Device:
      CUDA_CHECK(cudaMalloc(&p, n));
      break;
    case Kind::Managed:
      CUDA_CHECK(cudaMallocManaged(&p, n, cudaMemAttachGlobal));
      break;
    case Kind::Pinned:
      CUDA_CHECK(cudaMallocHost(&p, n));
      break;
    case Kind::Host:
      p = std::malloc(n);
      break;
    case Kind::Registered:
      // malloc'd memory, page-aligned so that two small buffers never share a registered page.
      p = std::aligned_alloc(4096, (n + 4095) / 4096 * 4096);
      if (p != nullptr) CUDA_CHECK(cudaHostRegister(p, n, cudaHostRegisterDefault));
      break;
  }
  if (p == nullptr) {
    std::fprintf(stderr, "coll_kinds: out of host memory (%zu bytes)\n", n);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  b.p = static_cast<unsigned char*>(p);
  if (kind == Kind::Pinned || kind == Kind::Registered) {
    void* d = nullptr;
    CUDA_CHECK(cudaHostGetDevicePointer(&d, p, 0));
    b.dev = static_cast<unsigned char*>(d);
  } else if (kernel_access(kind)) {
    b.dev = b.p;
  }
  b.image.resize(n);
  poison_fill(b.image.data(), bytes, salt);
  if (want_mirror && !kernel_access(kind)) {
    CUDA_CHECK(cudaMalloc(&b.mirror, n));
    CUDA_CHECK(cudaMemcpy(b.mirror, b.image.data(), n, cudaMemcpyHostToDevice));
  }
}

void buffer_free(Buffer& b) {
  switch (b.kind) {
    case Kind::Device:
    case Kind::Managed:
      CUDA_CHECK(cudaFree(b.p));
      break;
    case Kind::Pinned:
      CUDA_CHECK(cudaFreeHost(b.p));
      break;
    case Kind::Host:
      std::free(b.p);
      break;
    case Kind::Registered:
      CUDA_CHECK(cudaHostUnregister(b.p));
      std::free(b.p);
      break;
  }
  if (b.mirror != nullptr) CUDA_CHECK(cudaFree(b.mirror));
  b = Buffer{};
}

// The image (poison and whatever was written into it) into the buffer: memcpy for host memory,
// cudaMemcpy otherwise (also for managed memory: no host touch of its pages).
void copy_image_in(Buffer& b, std::int64_t from, std::int64_t bytes) {
  if (b.kind == Kind::Host) {
    std::memcpy(b.p + from, b.image.data() + from, static_cast<std::size_t>(bytes));
  } else {
    CUDA_CHECK(cudaMemcpy(b.p + from, b.image.data() + from, static_cast<std::size_t>(bytes),
                          cudaMemcpyDefault));
  }
}

// Host-side leaf writes into `base` (elements [e0, e0 + n) of the shape, leaf numbers from 0).
void write_leaves(unsigned char* base, const Shape& s, std::int64_t e0, std::int64_t n,
                  std::uint64_t seed, bool small) {
  const auto leaves = static_cast<std::int64_t>(s.off.size());
  std::uint64_t q = 0;
  for (std::int64_t e = 0; e < n; ++e) {
    unsigned char* at = base + (e0 + e) * s.extent;
    for (std::int64_t j = 0; j < leaves; ++j, ++q) {
      put_leaf(at + s.off[static_cast<std::size_t>(j)], s.leaf[static_cast<std::size_t>(j)], q,
               seed, small);
    }
  }
}

// Leaves of elements [e0, e0 + n) of `base` that differ from the expected values: the value of
// seeds[0], or (sum) the sum over all seeds.
long long check_leaves(const unsigned char* base, const Shape& s, std::int64_t e0, std::int64_t n,
                       const std::vector<std::uint64_t>& seeds, bool sum, bool small) {
  const auto leaves = static_cast<std::int64_t>(s.off.size());
  long long wrong = 0;
  std::uint64_t q = 0;
  for (std::int64_t e = 0; e < n; ++e) {
    const unsigned char* at = base + (e0 + e) * s.extent;
    for (std::int64_t j = 0; j < leaves; ++j, ++q) {
      const unsigned char* v = at + s.off[static_cast<std::size_t>(j)];
      if (s.leaf[static_cast<std::size_t>(j)] == kInt) {
        std::int64_t want = 0;
        for (std::size_t r = 0; r < (sum ? seeds.size() : 1); ++r)
          want += int_value(q, seeds[r], small);
        std::int32_t got;
        std::memcpy(&got, v, sizeof got);
        wrong += got != static_cast<std::int32_t>(want);
      } else {
        double want = 0;
        for (std::size_t r = 0; r < (sum ? seeds.size() : 1); ++r)
          want += double_value(q, seeds[r], small);
        double got;
        std::memcpy(&got, v, sizeof got);
        wrong += got != want;
      }
    }
  }
  return wrong;
}

// The seed of `writer`'s data at iteration `it` of case `id` (every rank derives the same).
std::uint64_t data_seed(std::uint64_t id, int it, int writer) {
  return (static_cast<std::uint64_t>(mix32(id, 0xC011ull)) << 32) ^
         mix32(static_cast<std::uint64_t>(it) * 4096 + static_cast<std::uint64_t>(writer), id);
}

// ---------------------------------------------------------------------------------------------
// One case on every rank.

// The regions of a rank's buffers: what is written before a call (by this rank), and what it
// checks after (elements [e0, e0 + n) against writer seeds; sum: against the sum of all ranks').
struct Region {
  Buffer* buf;
  std::int64_t e0, n;
  int writer;  // the rank whose data it holds; -1: the sum over all ranks
};

struct Plan {
  std::vector<Region> writes;  // this rank writes these before each call
  std::vector<Region> checks;  // and checks these after (send buffers: unchanged)
  bool small = false;          // Allreduce values
};

struct Result {
  Summary time;         // slowest rank per call
  double first_us = 0;  // the first (cold) call, slowest rank
  double fill_us = 0;   // median of the writers' fills, slowest rank
  double check_us = 0;  // median of the checks, slowest rank
  int samples = 0;
  long long wrong = 0;  // values and bytes wrong, all ranks, all checks
  std::string rank_medians, path;
  std::vector<double> per_call;  // counters per call, summed over ranks
};

// Strider's counters reported per call (summed over ranks); same_node counts calls also
// counted as served.
constexpr const char* kCounterNames[] = {"served",          "forwarded",      "same_node",
                                         "pieces_in_place", "packs_gpu",      "unpacks_gpu",
                                         "packs_staged",    "unpacks_staged", "pool_allocs",
                                         "sends_packed",    "recvs_packed"};
constexpr int kNumCounters = sizeof kCounterNames / sizeof kCounterNames[0];
enum { kServed = 0, kForwarded = 1, kSameNode = 2 };

void counter_values(const strider_stats& s, double out[kNumCounters]) {
  const std::uint64_t v[kNumCounters] = {s.collectives_served,
                                         s.collectives_forwarded,
                                         s.collectives_same_node,
                                         s.collective_pieces_in_place,
                                         s.packs_gpu,
                                         s.unpacks_gpu,
                                         s.packs_staged,
                                         s.unpacks_staged,
                                         s.pool_allocations,
                                         s.sends_packed,
                                         s.recvs_packed};
  for (int c = 0; c < kNumCounters; ++c) out[c] = static_cast<double>(v[c]);
}

// Strider's counters, found with dlsym so that the binary runs without Strider too:
// strider_get_stats_sized where the library has it (its strider_get_stats writes only the first
// counters), else an older library's strider_get_stats, which writes its whole struct (never
// larger than this header's; the spare bytes are there all the same).
using GetStatsSized = int (*)(strider_stats*, std::size_t);
using GetStatsOld = int (*)(strider_stats*);

struct Snapshot {
  strider_stats s{};
  unsigned char spare[512] = {};
};

struct StatsApi {
  GetStatsSized sized = nullptr;
  GetStatsOld old = nullptr;
  bool loaded() const { return sized != nullptr || old != nullptr; }
  void get(Snapshot& out) const {
    if (sized != nullptr) {
      sized(&out.s, sizeof out.s);
    } else if (old != nullptr) {
      old(&out.s);
    }
  }
};

struct Env {
  int rank = 0, size = 0, grid = 0;
  bool gpu = false;
  StatsApi stats;
};

Result run_case(const Env& env, const Options& opt, Coll coll, const Shape& s, const Layout& layout,
                Touch touch, std::uint64_t id) {
  const int rank = env.rank, size = env.size, cc = s.call_count;
  const Kind kind = layout.of(rank);
  const bool mirror = touch == Touch::Device;
  Buffer a, b;  // Bcast: a only; otherwise a = send, b = receive
  Plan plan;
  plan.small = coll == Coll::Allreduce;
  const unsigned salt = static_cast<unsigned>(rank) * 2;
  if (coll == Coll::Bcast) {
    buffer_alloc(a, kind, s.span(cc), salt, mirror);
    if (rank == opt.root) plan.writes.push_back({&a, 0, cc, rank});
    plan.checks.push_back({&a, 0, cc, opt.root});
  } else {
    const int rn = coll == Coll::Allgather ? size * cc : cc;
    buffer_alloc(a, kind, s.span(cc), salt, mirror);
    buffer_alloc(b, kind, s.span(rn), salt + 1, false);
    plan.writes.push_back({&a, 0, cc, rank});
    plan.checks.push_back({&a, 0, cc, rank});
    if (coll == Coll::Allgather) {
      for (int r = 0; r < size; ++r) plan.checks.push_back({&b, std::int64_t{r} * cc, cc, r});
    } else {
      plan.checks.push_back({&b, 0, cc, -1});
    }
  }
  // Leaf tables for the fill kernel.
  std::int64_t* d_off = nullptr;
  std::uint8_t* d_leaf = nullptr;
  if (touch == Touch::Device) {
    CUDA_CHECK(cudaMalloc(&d_off, s.off.size() * sizeof(std::int64_t)));
    CUDA_CHECK(cudaMalloc(&d_leaf, s.leaf.size()));
    CUDA_CHECK(cudaMemcpy(d_off, s.off.data(), s.off.size() * sizeof(std::int64_t),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_leaf, s.leaf.data(), s.leaf.size(), cudaMemcpyHostToDevice));
  }
  auto seeds_of = [&](const Region& r, int it) {
    std::vector<std::uint64_t> v;
    if (r.writer >= 0) {
      v.push_back(data_seed(id, it, r.writer));
    } else {
      for (int w = 0; w < size; ++w) v.push_back(data_seed(id, it, w));
    }
    return v;
  };

  // Initial contents: poison, the writers' data of iteration 0, copied in without a host touch.
  for (const Region& r : plan.writes) {
    write_leaves(r.buf->image.data(), s, r.e0, r.n, data_seed(id, 0, rank), plan.small);
  }
  copy_image_in(a, 0, a.bytes);
  if (b.p != nullptr) copy_image_in(b, 0, b.bytes);
  if (a.mirror != nullptr) {
    CUDA_CHECK(cudaMemcpy(a.mirror, a.image.data(), static_cast<std::size_t>(a.bytes),
                          cudaMemcpyHostToDevice));
  }
  if (env.gpu) CUDA_CHECK(cudaDeviceSynchronize());

  auto fill = [&](int it) {
    for (const Region& r : plan.writes) {
      Buffer& buf = *r.buf;
      const std::uint64_t seed = data_seed(id, it, rank);
      const std::int64_t from = r.e0 * s.extent, bytes = r.n * s.extent;
      if (touch == Touch::Host) {
        if (host_access(buf.kind)) {
          write_leaves(buf.p, s, r.e0, r.n, seed, plan.small);
        } else {  // device memory: written on the host, then copied
          write_leaves(buf.image.data(), s, r.e0, r.n, seed, plan.small);
          copy_image_in(buf, from, bytes);
        }
      } else {
        unsigned char* target = buf.dev != nullptr ? buf.dev : buf.mirror;
        fill_kernel<<<env.grid, 256>>>(target + from, r.n, static_cast<std::int64_t>(s.off.size()),
                                       s.extent, d_off, d_leaf, seed, plan.small);
        CUDA_CHECK(cudaGetLastError());
        if (buf.dev == nullptr) {
          CUDA_CHECK(cudaMemcpy(buf.p + from, buf.mirror + from, static_cast<std::size_t>(bytes),
                                cudaMemcpyDeviceToHost));
        }
        CUDA_CHECK(cudaDeviceSynchronize());
      }
    }
  };
  // The bytes of a region as the host sees them: the buffer itself, or the image after a copy.
  auto host_view = [&](Buffer& buf, std::int64_t from, std::int64_t bytes) -> const unsigned char* {
    if (touch != Touch::Device && host_access(buf.kind)) return buf.p;
    CUDA_CHECK(cudaMemcpy(buf.image.data() + from, buf.p + from, static_cast<std::size_t>(bytes),
                          cudaMemcpyDefault));
    return buf.image.data();
  };
  auto check = [&](int it) {
    long long wrong = 0;
    for (const Region& r : plan.checks) {
      const unsigned char* base = host_view(*r.buf, r.e0 * s.extent, r.n * s.extent);
      wrong += check_leaves(base, s, r.e0, r.n, seeds_of(r, it), r.writer < 0, plan.small);
    }
    return wrong;
  };
  auto collective = [&] {
    switch (coll) {
      case Coll::Bcast:
        MPI_CHECK(MPI_Bcast(a.p, cc, s.type, opt.root, MPI_COMM_WORLD));
        break;
      case Coll::Allgather:
        MPI_CHECK(MPI_Allgather(a.p, cc, s.type, b.p, cc, s.type, MPI_COMM_WORLD));
        break;
      case Coll::Allreduce:
        MPI_CHECK(MPI_Allreduce(a.p, b.p, cc, s.type, MPI_SUM, MPI_COMM_WORLD));
        break;
    }
  };

  long long wrong = 0;
  std::vector<double> fills, checks, calls;
  int it = 0;  // iteration number: the data's seed (touch none: always 0)
  auto iteration = [&](bool timed) {
    if (touch != Touch::None) {
      const double f0 = now_us();
      fill(it);
      if (timed && !plan.writes.empty()) fills.push_back(now_us() - f0);
    }
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    const double t0 = now_us();
    collective();
    const double t = now_us() - t0;
    if (touch != Touch::None) {
      const double c0 = now_us();
      wrong += check(it);
      if (timed) checks.push_back(now_us() - c0);
      ++it;
    }
    return t;
  };

  double first = 0;
  const double w0 = now_us();
  for (int w = 0; w < std::max(opt.warmup, 1); ++w) {
    const double t = iteration(false);
    if (w == 0) first = t;
  }
  const double per_iteration_us = (now_us() - w0) / std::max(opt.warmup, 1);
  int n = opt.iters;
  if (rank == 0) {
    const double fit = opt.budget_ms * 1e3 / std::max(per_iteration_us, 1e-3);
    n = static_cast<int>(std::min<double>(opt.iters, std::max<double>(opt.min_iters, fit)));
  }
  MPI_CHECK(MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD));
  Snapshot before, after;
  env.stats.get(before);
  for (int i = 0; i < n; ++i) calls.push_back(iteration(true));
  env.stats.get(after);

  // Every byte of every buffer: the last data where expected, poison everywhere else.
  const int last = touch == Touch::None ? 0 : it - 1;
  for (Buffer* buf : {&a, &b}) {
    if (buf->p == nullptr) continue;
    std::vector<unsigned char> want(static_cast<std::size_t>(buf->bytes));
    poison_fill(want.data(), buf->bytes, buf->salt);
    for (const Region& r : plan.checks) {
      if (r.buf != buf) continue;
      if (r.writer >= 0) {
        write_leaves(want.data(), s, r.e0, r.n, data_seed(id, last, r.writer), plan.small);
        continue;
      }
      // A sum (Allreduce): the expected sums, leaf by leaf.
      std::vector<std::uint64_t> seeds = seeds_of(r, last);
      const auto leaves = static_cast<std::int64_t>(s.off.size());
      std::uint64_t q = 0;
      for (std::int64_t e = 0; e < r.n; ++e) {
        for (std::int64_t j = 0; j < leaves; ++j, ++q) {
          unsigned char* at =
              want.data() + (r.e0 + e) * s.extent + s.off[static_cast<std::size_t>(j)];
          if (s.leaf[static_cast<std::size_t>(j)] == kInt) {
            std::int64_t v = 0;
            for (std::uint64_t sd : seeds) v += int_value(q, sd, true);
            const auto v32 = static_cast<std::int32_t>(v);
            std::memcpy(at, &v32, sizeof v32);
          } else {
            double v = 0;
            for (std::uint64_t sd : seeds) v += double_value(q, sd, true);
            std::memcpy(at, &v, sizeof v);
          }
        }
      }
    }
    const unsigned char* got = host_view(*buf, 0, buf->bytes);
    if (std::memcmp(got, want.data(), want.size()) != 0) {
      for (std::int64_t j = 0; j < buf->bytes; ++j) {
        wrong += got[j] != want[static_cast<std::size_t>(j)];
      }
    }
  }
  if (d_off != nullptr) CUDA_CHECK(cudaFree(d_off));
  if (d_leaf != nullptr) CUDA_CHECK(cudaFree(d_leaf));
  buffer_free(a);
  if (b.p != nullptr) buffer_free(b);

  // Gather: per-call times (slowest rank), medians, counters, paths.
  Result res;
  res.samples = n;
  std::vector<double> all(static_cast<std::size_t>(n) * size);
  MPI_CHECK(MPI_Gather(calls.data(), n, MPI_DOUBLE, all.data(), n, MPI_DOUBLE, 0, MPI_COMM_WORLD));
  double mine[4] = {first, summarize(fills).median, summarize(checks).median,
                    summarize(calls).median};
  std::vector<double> medians(static_cast<std::size_t>(size) * 4);
  MPI_CHECK(MPI_Gather(mine, 4, MPI_DOUBLE, medians.data(), 4, MPI_DOUBLE, 0, MPI_COMM_WORLD));
  MPI_CHECK(MPI_Reduce(&wrong, &res.wrong, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
  double delta[kNumCounters] = {}, at_start[kNumCounters] = {};
  counter_values(after.s, delta);
  counter_values(before.s, at_start);
  for (int c = 0; c < kNumCounters; ++c) delta[c] -= at_start[c];
  res.per_call.assign(kNumCounters, 0);
  MPI_CHECK(
      MPI_Reduce(delta, res.per_call.data(), kNumCounters, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
  // What this rank's calls took: ipc (same-node GPU to GPU), packed (Strider's wires through
  // host memory or mirrors), mpi (forwarded); '-' without Strider.
  char path[32] = "-";
  if (env.stats.loaded()) {
    const double same = delta[kSameNode], packed = delta[kServed] - same, fwd = delta[kForwarded];
    std::string p;
    auto add = [&p](double v, const char* name) {
      if (v <= 0) return;
      if (!p.empty()) p += '+';
      p += name;
    };
    add(same, "ipc");
    add(packed, "packed");
    add(fwd, "mpi");
    std::snprintf(path, sizeof path, "%s", p.empty() ? "none" : p.c_str());
  }
  std::vector<char> paths(static_cast<std::size_t>(size) * sizeof path);
  MPI_CHECK(MPI_Gather(path, sizeof path, MPI_CHAR, paths.data(), sizeof path, MPI_CHAR, 0,
                       MPI_COMM_WORLD));
  if (rank == 0) {
    std::vector<double> slowest(static_cast<std::size_t>(n), 0);
    for (int r = 0; r < size; ++r) {
      for (int i = 0; i < n; ++i) {
        slowest[static_cast<std::size_t>(i)] = std::max(slowest[static_cast<std::size_t>(i)],
                                                        all[static_cast<std::size_t>(r) * n + i]);
      }
    }
    res.time = summarize(slowest);
    for (int r = 0; r < size; ++r) {
      const double* m = &medians[static_cast<std::size_t>(r) * 4];
      res.first_us = std::max(res.first_us, m[0]);
      res.fill_us = std::max(res.fill_us, m[1]);
      res.check_us = std::max(res.check_us, m[2]);
      char one[32];
      std::snprintf(one, sizeof one, "%s%.1f", r == 0 ? "" : "|", m[3]);
      res.rank_medians += one;
      paths[static_cast<std::size_t>(r + 1) * sizeof path - 1] = '\0';
      if (r != 0) res.path += '|';
      res.path += &paths[static_cast<std::size_t>(r) * sizeof path];
    }
    for (double& v : res.per_call) v /= std::max(n, 1);
  }
  return res;
}

// The CSV's env column: Strider's variables that change the collective paths, as set here.
std::string strider_env() {
  std::string s;
  for (const char* v : {"STRIDER_DISABLE", "STRIDER_SAME_NODE", "STRIDER_SAME_NODE_DIRECT",
                        "STRIDER_COLL_HOST", "STRIDER_GPU_ENGINE", "STRIDER_METHOD"}) {
    const char* val = std::getenv(v);
    if (val == nullptr) continue;
    if (!s.empty()) s += ';';
    s += std::string(v + 8) + "=" + val;
  }
  std::replace(s.begin(), s.end(), ',', ' ');
  return s.empty() ? "default" : s;
}

// Distinct GPUs (node name + PCI bus id) over the ranks; 0 without a GPU.
int count_gpus(bool gpu, int device) {
  char mine[MPI_MAX_PROCESSOR_NAME + 32] = {};
  if (gpu) {
    int len = 0;
    MPI_Get_processor_name(mine, &len);
    const std::size_t at = std::strlen(mine);
    mine[at] = '/';
    CUDA_CHECK(
        cudaDeviceGetPCIBusId(mine + at + 1, static_cast<int>(sizeof mine - at - 1), device));
  }
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<char> all(static_cast<std::size_t>(size) * sizeof mine);
  MPI_CHECK(MPI_Allgather(mine, sizeof mine, MPI_CHAR, all.data(), sizeof mine, MPI_CHAR,
                          MPI_COMM_WORLD));
  std::vector<std::string> names;
  for (int r = 0; r < size; ++r) {
    std::string n(&all[static_cast<std::size_t>(r) * sizeof mine]);
    if (!n.empty() && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  return static_cast<int>(names.size());
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (const int parsed = parse_args(argc, argv, opt); parsed != 0) return parsed == 1 ? 0 : 2;
  MPI_Init(&argc, &argv);
  Env env;
  MPI_Comm_rank(MPI_COMM_WORLD, &env.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &env.size);
  const int rank = env.rank, size = env.size;
  if (size < 2 || opt.root >= size) {
    if (rank == 0) {
      std::fprintf(stderr, "coll_kinds: needs 2 or more ranks (and --root below them), not %d\n",
                   size);
    }
    MPI_Finalize();
    return 2;
  }

  // A GPU on every rank? Without one, only host-memory layouts run, with no CUDA call at all.
  int device = 0;
  env.gpu = strider::bench::select_gpu(device, opt.one_gpu);
  if (env.gpu) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    env.grid = prop.multiProcessorCount * 4;
  }
  env.stats.sized = reinterpret_cast<GetStatsSized>(dlsym(RTLD_DEFAULT, "strider_get_stats_sized"));
  if (env.stats.sized == nullptr) {
    env.stats.old = reinterpret_cast<GetStatsOld>(dlsym(RTLD_DEFAULT, "strider_get_stats"));
  }
  int with_strider = env.stats.loaded() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &with_strider, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!with_strider) env.stats = StatsApi{};

  // What can run here: host,host is the baseline and always runs; device memory needs Strider
  // (the MPI is not CUDA-aware), anything but host memory a GPU.
  std::vector<Layout> layouts;
  std::vector<std::string> dropped;
  const Layout host_layout{{Kind::Host, Kind::Host}};
  layouts.push_back(host_layout);
  bool wanted_gpu = false;
  for (const Layout& l : opt.layouts) {
    if (l.all_host()) continue;  // the baseline
    wanted_gpu = true;
    if (!env.gpu) {
      dropped.push_back(l.name(',') + " (no GPU)");
    } else if (!with_strider && l.any(Kind::Device)) {
      dropped.push_back(l.name(',') + " (device memory without Strider)");
    } else {
      layouts.push_back(l);
    }
  }
  std::vector<Touch> touches;
  for (Touch t : opt.touches) {
    if (t == Touch::Device && !env.gpu) {
      dropped.push_back("--touch device (no GPU)");
    } else {
      touches.push_back(t);
    }
  }
  if (!env.gpu && (wanted_gpu || touches.empty())) {
    if (rank == 0) {
      std::printf("coll_kinds: no GPU: nothing measured (--kinds host runs without one)\n");
    }
    MPI_Finalize();
    return 0;
  }
  const std::string device_name = strider::bench::device_label(
      env.gpu ? strider::bench::Memory::Device : strider::bench::Memory::Host, device);
  const int gpus = count_gpus(env.gpu, device);

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
  const std::string date = strider::bench::today(), env_text = strider_env();
  if (rank == 0) {
    std::printf("coll_kinds: %s, %d ranks on %d GPU(s), %s, %s; Strider %s (env: %s)\n",
                device_name.c_str(), size, gpus, mpi_name(), date.c_str(),
                with_strider ? "loaded" : "NOT loaded", env_text.c_str());
    for (const std::string& d : dropped) std::printf("  skipped: %s\n", d.c_str());
    std::fprintf(csv,
                 "device,date,mpi,ranks,gpus,collective,type,count,packed_bytes,kinds,touch,"
                 "median_us,p10_us,p90_us,samples,bytes_per_us,host_median_us,vs_host,first_us,"
                 "fill_us,check_us,rank_median_us,path,errors,span_bytes,root,strider,env");
    for (const char* c : kCounterNames) std::fprintf(csv, ",%s", c);
    std::fprintf(csv, "\n");
  }

  const double start = now_us();
  std::uint64_t id = 0;
  long long failed = 0;
  int cases = 0;
  bool out_of_time = false;
  for (Touch touch : touches) {
    for (Coll coll : opt.colls) {
      std::vector<std::string> types;
      const std::vector<std::string> allowed =
          coll == Coll::Allreduce
              ? std::vector<std::string>{"int", "double"}
              : std::vector<std::string>{"int", "vector:4", "indexed", "struct", "subarray"};
      for (const std::string& t : opt.types.empty() ? allowed : opt.types) {
        const bool ok = coll != Coll::Allreduce || t == "int" || t == "double";
        if (ok && std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
      }
      if (rank == 0 && !types.empty()) {
        std::printf(
            "\n%s, touch %s\n%-9s %-9s %6s %9s %-19s %9s %9s %9s %4s %8s %9s %6s %9s %8s %8s %-14s "
            "%s\n",
            kCollNames[static_cast<int>(coll)], kTouchNames[static_cast<int>(touch)], "coll",
            "type", "count", "bytes", "kinds", "median", "p10", "p90", "n", "B/us", "host_us",
            "x_host", "first", "fill", "check", "path", "errors");
      }
      for (const std::string& tname : types) {
        for (int want : opt.counts) {
          const int per_buffer = coll == Coll::Allgather ? size : 1;
          Shape shape = fitted_shape(tname, want, per_buffer, opt.max_bytes);
          double host_median = 0;
          for (const Layout& layout : layouts) {
            int stop = 0;
            if (rank == 0 && opt.time_limit_s > 0 && (now_us() - start) * 1e-6 > opt.time_limit_s) {
              stop = 1;
            }
            MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (stop) {
              out_of_time = true;
              break;
            }
            const Result r = run_case(env, opt, coll, shape, layout, touch, id++);
            ++cases;
            if (rank != 0) continue;
            if (layout == host_layout) host_median = r.time.median;
            if (r.wrong != 0) ++failed;
            const std::string kinds = layout.name('/');
            const double bpu =
                r.time.median > 0 ? static_cast<double>(shape.packed()) / r.time.median : 0;
            const double vs = host_median > 0 ? r.time.median / host_median : 0;
            const std::int64_t span = shape.span(per_buffer * shape.call_count);
            std::fprintf(csv,
                         "%s,%s,%s,%d,%d,%s,%s,%d,%lld,%s,%s,%.2f,%.2f,%.2f,%d,%.2f,%.2f,%.3f,%.2f,"
                         "%.2f,%.2f,%s,%s,%lld,%lld,%d,%s,%s",
                         device_name.c_str(), date.c_str(), mpi_name(), size, gpus,
                         kCollNames[static_cast<int>(coll)], tname.c_str(), shape.count,
                         static_cast<long long>(shape.packed()), kinds.c_str(),
                         kTouchNames[static_cast<int>(touch)], r.time.median, r.time.p10,
                         r.time.p90, r.samples, bpu, host_median, vs, r.first_us, r.fill_us,
                         r.check_us, r.rank_medians.c_str(), r.path.c_str(), r.wrong,
                         static_cast<long long>(span), opt.root, with_strider ? "loaded" : "none",
                         env_text.c_str());
            for (double v : r.per_call) {
              if (with_strider) {
                std::fprintf(csv, ",%.3f", v);
              } else {
                std::fprintf(csv, ",");
              }
            }
            std::fprintf(csv, "\n");
            std::fflush(csv);
            std::printf(
                "%-9s %-9s %6d %9lld %-19s %9.1f %9.1f %9.1f %4d %8.1f %9.1f %6.2f %9.1f %8.1f "
                "%8.1f %-14s %lld%s\n",
                kCollNames[static_cast<int>(coll)], tname.c_str(), shape.count,
                static_cast<long long>(shape.packed()), kinds.c_str(), r.time.median, r.time.p10,
                r.time.p90, r.samples, bpu, host_median, vs, r.first_us, r.fill_us, r.check_us,
                r.path.c_str(), r.wrong, r.wrong != 0 ? "  WRONG DATA" : "");
            std::fflush(stdout);
          }
          if (rank == 0 && shape.count != want) {
            std::printf("  (%s: count %d lowered to %d: buffers capped at %lld bytes)\n",
                        tname.c_str(), want, shape.count, static_cast<long long>(opt.max_bytes));
          }
          shape.release();
          if (out_of_time) break;
        }
        if (out_of_time) break;
      }
      if (out_of_time) break;
    }
    if (out_of_time) break;
  }
  MPI_Bcast(&failed, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::fclose(csv);
    std::printf("\n%d cases in %.1f s%s; %lld with wrong data; CSV: %s\n", cases,
                (now_us() - start) * 1e-6, out_of_time ? " (stopped at --time-limit)" : "", failed,
                opt.out.c_str());
  }
  MPI_Finalize();
  return failed != 0 ? 1 : 0;
}
