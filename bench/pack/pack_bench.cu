// bench/pack: GPU pack and unpack through MPI_Pack / MPI_Unpack with Strider preloaded, next to
// the floor computed from the bytes and lines each case must move, and the baselines measured
// in the same run: one cudaMemcpyAsync per block (capped, then scaled), cudaMemcpy2DAsync /
// cudaMemcpy3DAsync, and a naive one-thread-per-byte kernel; where the MPI is CUDA-aware, the MPI
// alone too (PMPI_Pack / PMPI_Unpack on the same device buffers, cases of at most 65536 blocks,
// checked against the naive kernel). Host wall time around each call plus its stream sync,
// median of many repetitions, on random data. Writes CSV.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "../common/mpi_name.hpp"
#include "strider/strider.h"

namespace {

#define CHECK(call)                                                                                \
  do {                                                                                             \
    const cudaError_t rc_ = (call);                                                                \
    if (rc_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(rc_)); \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

struct Options {
  bool quick = false;
  bool tempi = false;  // time as TEMPI's bench-mpi-pack: MPI_Wtime per call, trimean of 500
  std::string out = "pack.csv";
  std::string filter;
  bool mpi_aware = false;  // the MPI reads device memory: time it alone too (PMPI_*)
};

constexpr std::int64_t kAloneBlocks = 65536;  // the MPI alone: most blocks a case may have

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Median wall time of f() (which must synchronize), after warm-up; at least `min_reps`
// repetitions, more while under `budget_us` of total time.
double median_us(const std::function<void()>& f, int min_reps, double budget_us) {
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> t;
  const double start = now_us();
  while (static_cast<int>(t.size()) < min_reps ||
         (now_us() - start < budget_us && t.size() < 1000)) {
    const double a = now_us();
    f();
    t.push_back(now_us() - a);
  }
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

// TEMPI's statistic: (Q1 + 2 Q2 + Q3) / 4.
// As median_us, for a path that may take seconds a call (an MPI copying block by block): one
// call decides; past 20 ms it is the answer, else the median of 5.
double slow_median_us(const std::function<void()>& f) {
  const double a = now_us();
  f();
  const double first = now_us() - a;
  return first > 2e4 ? first : median_us(f, 5, 2e5);
}

double trimean(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  const auto q = [&](double f) { return t[static_cast<std::size_t>(f * (t.size() - 1))]; };
  return (q(0.25) + 2 * q(0.5) + q(0.75)) / 4;
}

// One case: the blocks of the object (byte offsets from the origin, in packed order, all of
// `block` bytes) describe it for the floor and the baselines; `make` builds the MPI type.
struct Case {
  std::string name, construction;
  int count = 1;
  std::int64_t block = 0, stride = 0;  // block: the blocks' length (0: see `lengths`)
  std::vector<std::int64_t> blocks;    // offsets of one element's blocks, in packed order
  std::vector<std::int64_t> lengths;   // per-block lengths of irregular cases (else empty)
  std::int64_t extent = 0;             // element extent (for count > 1)
  std::int64_t length(std::size_t k) const { return lengths.empty() ? block : lengths[k]; }
  std::int64_t element_bytes() const {
    std::int64_t n = 0;
    for (std::size_t k = 0; k < blocks.size(); ++k) n += length(k);
    return n;
  }
  std::function<MPI_Datatype()> make;
  // Geometry for cudaMemcpy2D/3D: rows of `block` bytes, `rows` per plane at `stride`,
  // `planes` at `plane_stride`; planes == 0 when the case is not a 2D/3D box.
  std::int64_t rows = 0, planes = 0, plane_stride = 0;
};

struct Machine {
  double copy_bw = 0;             // bytes/s, read + write, device to device
  double lines_per_s = 0;         // distinct 128-byte lines fetched per second, scattered
  double launch_us = 0;           // launch + sync of an empty kernel
  double classify_device_ns = 0;  // one cudaPointerGetAttributes on device memory
  double classify_host_ns = 0;    // ... on pageable host memory
};

__global__ void empty_kernel() {}

// Random bytes (a hash of index and seed): filling a GiB from the host would dominate the run.
__global__ void fill_random(unsigned char* p, std::int64_t n, unsigned long long seed) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    unsigned long long x = (static_cast<unsigned long long>(i) + seed) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    p[i] = static_cast<unsigned char>(x >> 56);
  }
}

// One byte from each of `lines` 128-byte lines 512 bytes apart, 16 independent loads in flight
// per thread: the rate of distinct lines the memory system serves (the floor's Lambda).
__global__ void touch_lines(const unsigned char* p, std::size_t lines, unsigned* sink) {
  constexpr int kInFlight = 16;
  unsigned acc = 0;
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < lines; i += step * kInFlight) {
    unsigned char v[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const std::size_t line = i + u * step;
      v[u] = line < lines ? p[line * 512] : 0;
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) acc += v[u];
  }
  if (acc == 0xffffffffu) *sink = acc;
}

// The naive kernel: one thread per packed byte, its source found by plain division.
__global__ void naive_kernel(unsigned char* user, unsigned char* packed, std::int64_t total,
                             std::int64_t block, std::int64_t rows, std::int64_t stride,
                             std::int64_t plane_stride, std::int64_t extent,
                             std::int64_t per_element, bool pack) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= total) return;
  const std::int64_t e = i / per_element, k = i % per_element;
  const std::int64_t b = k / block, byte = k % block;
  const std::int64_t at = e * extent + (b % rows) * stride + (b / rows) * plane_stride + byte;
  if (pack) {
    packed[i] = user[at];
  } else {
    user[at] = packed[i];
  }
}

// The naive kernel for irregular cases: one thread per packed byte, its source from a table.
__global__ void naive_table_kernel(unsigned char* user, unsigned char* packed,
                                   const std::int64_t* source, std::int64_t total, bool pack) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= total) return;
  if (pack) {
    packed[i] = user[source[i]];
  } else {
    user[source[i]] = packed[i];
  }
}

Machine measure_machine(bool quick) {
  Machine m;
  const std::size_t bytes = std::size_t{1} << 30;
  void *a, *b;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  CHECK(cudaMemset(a, 1, bytes));
  const double copy = median_us(
      [&] {
        CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
        CHECK(cudaDeviceSynchronize());
      },
      quick ? 3 : 10, 0);
  m.copy_bw = 2.0 * bytes / (copy * 1e-6);
  unsigned* sink;
  CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  const std::size_t lines = bytes / 512;
  const double touch = median_us(
      [&] {
        touch_lines<<<132 * 8, 256>>>(static_cast<unsigned char*>(a), lines, sink);
        CHECK(cudaDeviceSynchronize());
      },
      quick ? 3 : 10, 0);
  m.lines_per_s = lines / (touch * 1e-6);
  m.launch_us = median_us(
      [&] {
        empty_kernel<<<1, 32>>>();
        CHECK(cudaDeviceSynchronize());
      },
      quick ? 20 : 200, 0);
  // What classifying a buffer costs (Strider does it for both buffers of every call).
  std::vector<unsigned char> host(4096);
  cudaPointerAttributes attr{};
  constexpr int kCalls = 1000;
  m.classify_device_ns = median_us(
                             [&] {
                               for (int i = 0; i < kCalls; ++i)
                                 CHECK(cudaPointerGetAttributes(&attr, static_cast<char*>(a) + i));
                             },
                             quick ? 3 : 20, 0) *
                         1000 / kCalls;
  m.classify_host_ns = median_us(
                           [&] {
                             for (int i = 0; i < kCalls; ++i)
                               CHECK(cudaPointerGetAttributes(&attr, host.data() + i));
                           },
                           quick ? 3 : 20, 0) *
                       1000 / kCalls;
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(sink));
  return m;
}

// Bytes fetched at 64-byte granularity (R) and distinct 128-byte lines (L) of a case.
void footprint(const Case& c, double& read_bytes, double& lines) {
  std::vector<std::pair<std::int64_t, std::int64_t>> runs;  // [start, end)
  runs.reserve(c.blocks.size() * c.count);
  for (int e = 0; e < c.count; ++e) {
    for (std::size_t k = 0; k < c.blocks.size(); ++k) {
      const std::int64_t s = c.blocks[k] + e * c.extent;
      runs.emplace_back(s, s + c.length(k));
    }
  }
  std::sort(runs.begin(), runs.end());
  auto distinct = [&](std::int64_t unit) {
    std::int64_t last = -1, n = 0;
    for (const auto& [s, end_byte] : runs) {
      const std::int64_t first = std::max(last + 1, s / unit), end = (end_byte - 1) / unit;
      if (end >= first) n += end - first + 1;
      last = std::max(last, end);
    }
    return static_cast<double>(n);
  };
  read_bytes = distinct(64) * 64;
  lines = distinct(128);
}

std::vector<Case> cases(bool quick) {
  std::vector<Case> out;
  const std::int64_t stride = 512;
  const std::int64_t blocks_2d[] = {1, 2, 4, 8, 32, 64, 128, 256, 512};
  const std::int64_t sizes[] = {1024, 64 << 10, 1 << 20, 4 << 20};
  for (std::int64_t total : sizes) {
    for (std::int64_t b : blocks_2d) {
      for (int count : {1, 2}) {
        for (const char* how : {"vector", "hvector", "subarray"}) {
          if (quick && (count == 2 || std::strcmp(how, "vector") != 0)) continue;
          Case c;
          const std::int64_t n = total / b / count;  // blocks per element
          c.name = "2d_b" + std::to_string(b) + "_" +
                   (total >= (1 << 20) ? std::to_string(total >> 20) + "MiB"
                                       : std::to_string(total >> 10) + "KiB");
          c.construction = how;
          c.count = count;
          c.block = b;
          c.stride = stride;
          for (std::int64_t i = 0; i < n; ++i) c.blocks.push_back(i * stride);
          c.rows = n;
          c.planes = 1;
          const std::string h = how;
          c.make = [n, b, stride, h] {
            MPI_Datatype t;
            if (h == "vector") {
              MPI_Type_vector(static_cast<int>(n), static_cast<int>(b), static_cast<int>(stride),
                              MPI_BYTE, &t);
            } else if (h == "hvector") {
              MPI_Type_create_hvector(static_cast<int>(n), static_cast<int>(b), stride, MPI_BYTE,
                                      &t);
            } else {
              const int sz[2] = {static_cast<int>(n), static_cast<int>(stride)};
              const int sub[2] = {static_cast<int>(n), static_cast<int>(b)};
              const int st[2] = {0, 0};
              MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_BYTE, &t);
            }
            return t;
          };
          // The extent MPI gives these types (subarray: the whole array).
          c.extent = h == "subarray" ? n * stride : (n - 1) * stride + b;
          out.push_back(std::move(c));
        }
      }
    }
  }
  // Contiguous objects: their floor is a cudaMemcpyAsync + sync of the same bytes.
  for (std::int64_t total : sizes) {
    Case c;
    c.name = "contig_" + (total >= (1 << 20) ? std::to_string(total >> 20) + "MiB"
                                             : std::to_string(total >> 10) + "KiB");
    c.construction = "contiguous";
    c.block = total;
    c.stride = total;
    c.blocks.push_back(0);
    c.extent = total;
    c.rows = 1;
    c.planes = 1;
    c.make = [total] {
      MPI_Datatype t;
      MPI_Type_contiguous(static_cast<int>(total), MPI_BYTE, &t);
      return t;
    };
    out.push_back(std::move(c));
  }
  // 3D: boxes of 1 MiB out of a 1024^3-byte array, and stencil faces; x fastest.
  auto box = [&](const std::string& name, std::int64_t x, std::int64_t y, std::int64_t z) {
    Case c;
    c.name = name;
    c.construction = "subarray";
    c.block = x;
    c.stride = 1024;
    c.rows = y;
    c.planes = z;
    c.plane_stride = 1024 * 1024;
    for (std::int64_t k = 0; k < z; ++k) {
      for (std::int64_t j = 0; j < y; ++j) c.blocks.push_back(k * 1024 * 1024 + j * 1024);
    }
    c.extent = std::int64_t{1} << 30;
    c.make = [x, y, z] {
      const int sz[3] = {1024, 1024, 1024};
      const int sub[3] = {static_cast<int>(z), static_cast<int>(y), static_cast<int>(x)};
      const int st[3] = {0, 0, 0};
      MPI_Datatype t;
      MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_C, MPI_BYTE, &t);
      return t;
    };
    out.push_back(std::move(c));
  };
  for (std::int64_t x = 1; x <= 1024; x *= quick ? 8 : 2) {
    std::int64_t y = 1, rest = (std::int64_t{1} << 20) / x;
    while (y * y < rest) y *= 2;
    box("3d_box_x" + std::to_string(x), x, y, rest / y);
  }
  box("3d_face_12x512x512", 12, 512, 512);
  box("3d_face_512x3x512", 512, 3, 512);
  box("3d_face_512x512x3", 512, 512, 3);

  // Block lists. Irregular indexed blocks of 1-64 bytes, about 1 MiB in all.
  {
    Case c;
    c.name = "list_indexed_1-64B_1MiB";
    c.construction = "hindexed";
    std::mt19937_64 g(11);
    std::int64_t at = 0, bytes = 0;
    while (bytes < (1 << 20)) {
      const std::int64_t len = 1 + static_cast<std::int64_t>(g() % 64);
      c.blocks.push_back(at);
      c.lengths.push_back(len);
      bytes += len;
      at += len + 1 + static_cast<std::int64_t>(g() % 128);
    }
    c.extent = at;
    auto blocks = c.blocks;
    auto lengths = c.lengths;
    c.make = [blocks, lengths] {
      std::vector<int> len(lengths.begin(), lengths.end());
      std::vector<MPI_Aint> disp(blocks.begin(), blocks.end());
      MPI_Datatype t;
      MPI_Type_create_hindexed(static_cast<int>(len.size()), len.data(), disp.data(), MPI_BYTE, &t);
      return t;
    };
    out.push_back(std::move(c));
  }
  // An array of structs {int id; double x, y, z} (a 4-byte hole after id): 1 MiB of elements,
  // the struct's pieces repeated (the vector of structs canonical form).
  {
    Case c;
    c.name = "list_aos_struct_1MiB";
    c.construction = "vector(struct)";
    const std::int64_t n = (1 << 20) / 28;
    for (std::int64_t i = 0; i < n; ++i) {
      c.blocks.push_back(i * 32);
      c.lengths.push_back(4);
      c.blocks.push_back(i * 32 + 8);
      c.lengths.push_back(24);
    }
    c.extent = n * 32;
    c.make = [n] {
      const int len[2] = {1, 3};
      const MPI_Aint disp[2] = {0, 8};
      const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
      MPI_Datatype s, t;
      MPI_Type_create_struct(2, len, disp, types, &s);
      MPI_Type_contiguous(static_cast<int>(n), s, &t);
      MPI_Type_free(&s);
      return t;
    };
    out.push_back(std::move(c));
  }
  // A struct of three arrays at unrelated offsets (struct of arrays), 1 MiB each.
  {
    Case c;
    c.name = "list_soa_struct_3MiB";
    c.construction = "struct";
    const std::int64_t offs[3] = {0, 5 << 20, 11 << 20};
    for (std::int64_t o : offs) {
      c.blocks.push_back(o);
      c.lengths.push_back(1 << 20);
    }
    c.extent = (11 << 20) + (1 << 20);
    c.make = [offs] {
      const int len[3] = {1 << 20, 1 << 20, 1 << 20};
      const MPI_Aint disp[3] = {offs[0], offs[1], offs[2]};
      const MPI_Datatype types[3] = {MPI_BYTE, MPI_BYTE, MPI_BYTE};
      MPI_Datatype t;
      MPI_Type_create_struct(3, len, disp, types, &t);
      return t;
    };
    out.push_back(std::move(c));
  }
  return out;
}

struct Result {
  double pack = 0, unpack = 0, per_block = 0, copy2d = 0, naive_pack = 0, naive_unpack = 0;
  double tempi_pack = 0, tempi_unpack = 0;  // --tempi: trimean of MPI_Wtime per call
  // The MPI alone (PMPI_Pack / PMPI_Unpack on the device buffers), where it is CUDA-aware and the
  // case has at most kAloneBlocks blocks; -1 where not measured.
  double mpi_pack = -1, mpi_unpack = -1;
  int mpi_verified = -1;
  bool per_block_scaled = false;
  bool verified = false;
};

Result run_case(const Case& c, const Options& opt, std::mt19937_64& rng) {
  Result r;
  MPI_Datatype type = c.make();
  MPI_Type_commit(&type);
  int size = 0;
  MPI_Type_size(type, &size);
  const std::int64_t packed_bytes = static_cast<std::int64_t>(size) * c.count;
  std::int64_t span = 0;
  for (int e = 0; e < c.count; ++e) {
    for (std::size_t k = 0; k < c.blocks.size(); ++k) {
      span = std::max(span, e * c.extent + c.blocks[k] + c.length(k));
    }
  }
  unsigned char *user, *packed, *check;
  CHECK(cudaMalloc(&user, span));
  CHECK(cudaMalloc(&packed, packed_bytes));
  CHECK(cudaMalloc(&check, packed_bytes));
  fill_random<<<132 * 8, 256>>>(user, span, rng());
  CHECK(cudaDeviceSynchronize());
  const int reps = opt.quick ? 5 : 30;
  const double budget = opt.quick ? 1e4 : 5e4;
  int position = 0;
  if (opt.tempi) {
    // As TEMPI's bench-mpi-pack: MPI_Wtime around MPI_Pack, then around MPI_Unpack.
    constexpr int kIters = 500;
    std::vector<double> packs, unpacks;
    for (int i = 0; i < kIters; ++i) {
      int at = 0;
      const double t0 = MPI_Wtime();
      MPI_Pack(user, c.count, type, packed, static_cast<int>(packed_bytes), &at, MPI_COMM_SELF);
      const double t1 = MPI_Wtime();
      at = 0;
      MPI_Unpack(packed, static_cast<int>(packed_bytes), &at, user, c.count, type, MPI_COMM_SELF);
      const double t2 = MPI_Wtime();
      packs.push_back((t1 - t0) * 1e6);
      unpacks.push_back((t2 - t1) * 1e6);
    }
    r.tempi_pack = trimean(packs);
    r.tempi_unpack = trimean(unpacks);
  }
  r.pack = median_us(
      [&] {
        position = 0;
        MPI_Pack(user, c.count, type, packed, static_cast<int>(packed_bytes), &position,
                 MPI_COMM_SELF);
      },
      reps, budget);
  // Verify once against the naive kernel's result.
  const std::int64_t per_element = c.element_bytes();
  const std::int64_t rows = c.rows ? c.rows : 1;
  const std::int64_t plane = c.planes ? c.plane_stride : 0;
  std::int64_t* source = nullptr;  // per-byte source offsets of irregular cases
  if (!c.lengths.empty()) {
    std::vector<std::int64_t> table;
    table.reserve(packed_bytes);
    for (int e = 0; e < c.count; ++e) {
      for (std::size_t k = 0; k < c.blocks.size(); ++k) {
        for (std::int64_t b = 0; b < c.length(k); ++b)
          table.push_back(e * c.extent + c.blocks[k] + b);
      }
    }
    CHECK(cudaMalloc(&source, table.size() * sizeof(std::int64_t)));
    CHECK(cudaMemcpy(source, table.data(), table.size() * sizeof(std::int64_t),
                     cudaMemcpyHostToDevice));
  }
  auto naive = [&](bool pack_dir, unsigned char* out) {
    const std::int64_t threads = 256, grid = (packed_bytes + threads - 1) / threads;
    if (source) {
      naive_table_kernel<<<static_cast<unsigned>(grid), threads>>>(user, out, source, packed_bytes,
                                                                   pack_dir);
    } else {
      naive_kernel<<<static_cast<unsigned>(grid), threads>>>(
          user, out, packed_bytes, c.block, rows, c.stride, plane, c.extent, per_element, pack_dir);
    }
    CHECK(cudaDeviceSynchronize());
  };
  naive(true, check);
  {
    std::vector<unsigned char> a(packed_bytes), b(packed_bytes);
    CHECK(cudaMemcpy(a.data(), packed, packed_bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(b.data(), check, packed_bytes, cudaMemcpyDeviceToHost));
    r.verified = a == b && position == packed_bytes;
  }
  r.unpack = median_us(
      [&] {
        position = 0;
        MPI_Unpack(packed, static_cast<int>(packed_bytes), &position, user, c.count, type,
                   MPI_COMM_SELF);
      },
      reps, budget);
  r.naive_pack = median_us([&] { naive(true, check); }, reps, budget);
  const std::int64_t blocks = static_cast<std::int64_t>(c.blocks.size()) * c.count;
  if (opt.mpi_aware && blocks <= kAloneBlocks) {
    // Into `packed`, then compared with the naive kernel's result still in `check`.
    r.mpi_pack = slow_median_us([&] {
      position = 0;
      PMPI_Pack(user, c.count, type, packed, static_cast<int>(packed_bytes), &position,
                MPI_COMM_SELF);
    });
    std::vector<unsigned char> a(packed_bytes), b(packed_bytes);
    CHECK(cudaMemcpy(a.data(), packed, packed_bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(b.data(), check, packed_bytes, cudaMemcpyDeviceToHost));
    r.mpi_verified = a == b && position == packed_bytes ? 1 : 0;
    r.mpi_unpack = slow_median_us([&] {
      position = 0;
      PMPI_Unpack(packed, static_cast<int>(packed_bytes), &position, user, c.count, type,
                  MPI_COMM_SELF);
    });
  }
  r.naive_unpack = median_us([&] { naive(false, check); }, reps, budget);

  // One cudaMemcpyAsync per block, capped so the slowest cases stay bounded, then scaled.
  const std::int64_t nblocks = static_cast<std::int64_t>(c.blocks.size()) * c.count;
  const std::int64_t cap = std::min<std::int64_t>(nblocks, opt.quick ? 256 : 4096);
  const double t = median_us(
      [&] {
        std::int64_t at = 0;
        for (std::int64_t i = 0; i < cap; ++i) {
          const std::int64_t e = i / static_cast<std::int64_t>(c.blocks.size());
          const auto k = static_cast<std::size_t>(i % static_cast<std::int64_t>(c.blocks.size()));
          CHECK(cudaMemcpyAsync(packed + at, user + e * c.extent + c.blocks[k], c.length(k),
                                cudaMemcpyDeviceToDevice, 0));
          at += c.length(k);
        }
        CHECK(cudaStreamSynchronize(0));
      },
      opt.quick ? 3 : 5, 0);
  r.per_block = t * static_cast<double>(nblocks) / cap;
  r.per_block_scaled = cap < nblocks;

  // cudaMemcpy2DAsync (one plane) or cudaMemcpy3DAsync, per element; for a contiguous object
  // its floor, one cudaMemcpyAsync of the bytes.
  if (c.construction == "contiguous") {
    r.copy2d = median_us(
        [&] {
          CHECK(cudaMemcpyAsync(packed, user, packed_bytes, cudaMemcpyDeviceToDevice, 0));
          CHECK(cudaStreamSynchronize(0));
        },
        reps, budget);
  } else if (c.planes > 0) {
    r.copy2d = median_us(
        [&] {
          for (int e = 0; e < c.count; ++e) {
            unsigned char* src = user + e * c.extent;
            unsigned char* dst = packed + e * per_element;
            if (c.planes == 1) {
              CHECK(cudaMemcpy2DAsync(dst, c.block, src, c.stride, c.block, c.rows,
                                      cudaMemcpyDeviceToDevice, 0));
            } else {
              cudaMemcpy3DParms p{};
              p.srcPtr = make_cudaPitchedPtr(src, c.stride, c.block, c.plane_stride / c.stride);
              p.dstPtr = make_cudaPitchedPtr(dst, c.block, c.block, c.rows);
              p.extent = make_cudaExtent(c.block, c.rows, c.planes);
              p.kind = cudaMemcpyDeviceToDevice;
              CHECK(cudaMemcpy3DAsync(&p, 0));
            }
          }
          CHECK(cudaStreamSynchronize(0));
        },
        reps, budget);
  }
  CHECK(cudaFree(user));
  CHECK(cudaFree(packed));
  CHECK(cudaFree(check));
  if (source) CHECK(cudaFree(source));
  MPI_Type_free(&type);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf(
          "usage: %s [--quick] [--tempi] [--out FILE] [--filter TEXT]\n"
          "Run with LD_PRELOAD=libstrider.so on a GPU machine. Times MPI_Pack/MPI_Unpack of\n"
          "device buffers (Strider's GPU engine) against the floor and baselines; writes CSV.\n"
          "--tempi also times each call as TEMPI's bench-mpi-pack does (MPI_Wtime around\n"
          "MPI_Pack, then around MPI_Unpack; trimean of 500).\n",
          argv[0]);
      return 0;
    }
    if (a == "--quick") opt.quick = true;
    if (a == "--tempi") opt.tempi = true;
    if (a == "--out" && i + 1 < argc) opt.out = argv[++i];
    if (a == "--filter" && i + 1 < argc) opt.filter = argv[++i];
  }
  MPI_Init(&argc, &argv);
  if (dlsym(RTLD_DEFAULT, "strider_get_stats_sized") == nullptr) {
    std::fprintf(stderr, "libstrider is not loaded: run with LD_PRELOAD=.../libstrider.so\n");
    return 2;
  }
  opt.mpi_aware = strider::bench::mpi_cuda_aware();
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  Machine m = measure_machine(opt.quick);
  // The scattered-line rate of the floor: the measured one, but never below the 55 G lines/s the
  // project's anchor measured on an H200 (a floor must stay a lower bound on time).
  const double measured_lines = m.lines_per_s;
  if (std::strstr(prop.name, "H200") != nullptr) m.lines_per_s = std::max(m.lines_per_s, 55e9);
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::printf(
      "device %s, %s: copy %.2f TB/s (read+write), %.1f G lines/s, launch+sync %.2f us, "
      "cudaPointerGetAttributes %.0f ns (device) %.0f ns (host); floor uses %.1f G lines/s\n",
      prop.name, date, m.copy_bw / 1e12, measured_lines / 1e9, m.launch_us, m.classify_device_ns,
      m.classify_host_ns, m.lines_per_s / 1e9);
  FILE* csv = std::fopen(opt.out.c_str(), "w");
  std::fprintf(csv,
               "device,date,case,construction,count,block,stride,packed_bytes,blocks,floor_us,"
               "strider_pack_us,strider_unpack_us,pack_vs_floor,unpack_vs_floor,"
               "per_block_memcpy_us,per_block_scaled,memcpy2d3d_us,naive_pack_us,"
               "naive_unpack_us,verified,copy_tbps,lines_gps,launch_us,tempi_pack_us,tempi_unpack_"
               "us,mpi,mpi_alone_pack_us,"
               "mpi_alone_unpack_us,mpi_alone_verified\n");
  std::printf("%-22s %-9s %2s %11s %9s %9s %9s %6s %6s %11s %9s %9s%s\n", "case", "type", "n",
              "packed B", "floor us", "pack us", "unpack us", "p/fl", "u/fl", "memcpy/blk",
              "2D/3D/cpy", "naive", opt.tempi ? "  tempi-pack tempi-unpack" : "");
  std::mt19937_64 rng(2026);
  for (const Case& c : cases(opt.quick)) {
    if (!opt.filter.empty() && c.name.find(opt.filter) == std::string::npos) continue;
    const Result r = run_case(c, opt, rng);
    double read_bytes = 0, lines = 0;
    footprint(c, read_bytes, lines);
    const double written = static_cast<double>(c.element_bytes()) * c.count;
    const double floor_us =
        std::max((read_bytes + written) / m.copy_bw, lines / m.lines_per_s) * 1e6 + m.launch_us;
    std::fprintf(
        csv,
        "%s,%s,%s,%s,%d,%lld,%lld,%.0f,%zu,%.2f,%.2f,%.2f,%.3f,%.3f,%.1f,%d,%.2f,"
        "%.2f,%.2f,%d,%.3f,%.2f,%.2f,%.2f,%.2f,%s,%.2f,%.2f,%d\n",
        prop.name, date, c.name.c_str(), c.construction.c_str(), c.count,
        static_cast<long long>(c.lengths.empty() ? c.block
                                                 : c.element_bytes() /
                                                       static_cast<std::int64_t>(c.blocks.size())),
        static_cast<long long>(c.stride), written, c.blocks.size() * c.count, floor_us, r.pack,
        r.unpack, r.pack / floor_us, r.unpack / floor_us, r.per_block, r.per_block_scaled ? 1 : 0,
        r.copy2d, r.naive_pack, r.naive_unpack, r.verified ? 1 : 0, m.copy_bw / 1e12,
        m.lines_per_s / 1e9, m.launch_us, r.tempi_pack, r.tempi_unpack, strider::bench::mpi_name(),
        r.mpi_pack, r.mpi_unpack, r.mpi_verified);
    std::fflush(csv);
    std::printf("%-22s %-9s %2d %11.0f %9.1f %9.1f %9.1f %6.2f %6.2f %11.1f %9.1f %9.1f",
                c.name.c_str(), c.construction.c_str(), c.count, written, floor_us, r.pack,
                r.unpack, r.pack / floor_us, r.unpack / floor_us, r.per_block, r.copy2d,
                r.naive_pack);
    if (opt.tempi) std::printf("  %10.2f %12.2f", r.tempi_pack, r.tempi_unpack);
    if (r.mpi_verified >= 0) {
      std::printf("  MPI alone: pack %.1f us, unpack %.1f us%s", r.mpi_pack, r.mpi_unpack,
                  r.mpi_verified ? "" : " (WRONG)");
    }
    std::printf("%s\n", r.verified ? "" : "  WRONG");
  }
  std::fclose(csv);
  MPI_Finalize();
  return 0;
}
