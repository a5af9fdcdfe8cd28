// Host pack benchmark: Strider's CPU engine (MPI_Pack/MPI_Unpack, interposed) against the
// system MPI (PMPI_Pack/PMPI_Unpack, which Strider does not intercept) on the same buffers.
// Run with LD_PRELOAD=libstrider.so STRIDER_HOST_ENGINE=on.
#include <dlfcn.h>
#include <mpi.h>
#include <strider/strider.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../common/mpi_name.hpp"

namespace {

using strider::bench::mpi_name;

using Clock = std::chrono::steady_clock;
using GetStats = int (*)(strider_stats*, size_t);

struct Settings {
  int min_reps = 30;
  int max_reps = 1000;
  double budget_s = 0.3;   // per case, all four operations together
  double batch_us = 20.0;  // time calls in batches at least this long: the clock is coarse
  std::string filter;      // run only cases whose name contains this
};

struct Case {
  std::string name;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int count = 1;
  std::int64_t block_bytes = 0;  // contiguous run length (mean, for irregular types)
  std::int64_t blocks = 0;       // contiguous runs per pack call
};

struct Buffer {
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> data;
  std::size_t size = 0;

  explicit Buffer(std::size_t n) : size(n) {
    // Page-aligned, like a real application array; rounded up as aligned_alloc requires.
    const std::size_t rounded = (std::max<std::size_t>(n, 1) + 4095) / 4096 * 4096;
    data.reset(static_cast<std::byte*>(std::aligned_alloc(4096, rounded)));
    if (!data) {
      std::fprintf(stderr, "out of memory allocating %zu bytes\n", n);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  std::byte* get() const { return data.get(); }
};

// splitmix64: fast enough to fill gigabytes.
void fill_random(Buffer& b, std::uint64_t seed) {
  std::uint64_t x = seed;
  auto next = [&x] {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  std::size_t i = 0;
  for (; i + 8 <= b.size; i += 8) {
    const std::uint64_t v = next();
    std::memcpy(b.get() + i, &v, 8);
  }
  for (; i < b.size; ++i) b.get()[i] = static_cast<std::byte>(next());
}

// Order-sensitive digest: lets the two unpacks share one destination buffer.
std::uint64_t digest(const Buffer& b) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  std::size_t i = 0;
  for (; i + 8 <= b.size; i += 8) {
    std::uint64_t v;
    std::memcpy(&v, b.get() + i, 8);
    h = (h ^ v) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < b.size; ++i) h = (h ^ static_cast<std::uint64_t>(b.get()[i])) * 0x100000001b3ull;
  return h;
}

MPI_Datatype commit(MPI_Datatype t) {
  MPI_Type_commit(&t);
  return t;
}

std::string size_name(std::int64_t bytes) {
  if (bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + "MiB";
  if (bytes % (1 << 10) == 0) return std::to_string(bytes >> 10) + "KiB";
  return std::to_string(bytes) + "B";
}

// TEMPI's 2D set: blocks of `block` bytes every 512 bytes.
Case tempi2d(std::int64_t block, std::int64_t packed) {
  const auto blocks = packed / block;
  MPI_Datatype t;
  MPI_Type_vector(static_cast<int>(blocks), static_cast<int>(block), 512, MPI_BYTE, &t);
  return {"tempi2d_b" + std::to_string(block) + "_" + size_name(packed), commit(t), 1, block,
          blocks};
}

// A halo face of a 256^3 array of doubles, `width` elements thick, normal to `axis`
// (0 = x, the fastest dimension).
Case face3d(int axis, int width) {
  constexpr int n = 256;
  int sizes[3] = {n, n, n}, sub[3] = {n, n, n}, starts[3] = {0, 0, 0};
  sub[2 - axis] = width;  // C order: the last dimension is x
  MPI_Datatype t;
  MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
  const std::int64_t elem = 8;
  const std::int64_t block = axis == 0   ? elem * width
                             : axis == 1 ? elem * n * width
                                         : elem * n * n * width;
  const std::int64_t blocks = axis == 0 ? n * n : axis == 1 ? n : 1;
  return {std::string("face_") + "xyz"[axis] + "_w" + std::to_string(width), commit(t), 1, block,
          blocks};
}

Case contiguous_1mib() {
  MPI_Datatype t;
  MPI_Type_contiguous(1 << 20, MPI_BYTE, &t);
  return {"contiguous_1MiB", commit(t), 1, 1 << 20, 1};
}

// Irregular blocks of 1-64 bytes with 1-64-byte gaps, about 1 MiB in total.
Case indexed_irregular() {
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> len(1, 64), gap(1, 64);
  std::vector<int> lengths, displs;
  int total = 0;
  for (int at = 0; total < (1 << 20);) {
    const int l = len(rng);
    lengths.push_back(l);
    displs.push_back(at);
    total += l;
    at += l + gap(rng);
  }
  MPI_Datatype t;
  MPI_Type_indexed(static_cast<int>(lengths.size()), lengths.data(), displs.data(), MPI_BYTE, &t);
  const auto blocks = static_cast<std::int64_t>(lengths.size());
  return {"indexed_irregular_1-64B", commit(t), 1, total / blocks, blocks};
}

// Struct of arrays: x, y, z (double) and id (int) arrays of 32768 particles, 4 KiB apart.
Case soa_struct() {
  constexpr int n = 32768;
  const int lengths[4] = {n, n, n, n};
  const MPI_Datatype types[4] = {MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE, MPI_INT};
  MPI_Aint displs[4];
  MPI_Aint at = 0;
  for (int i = 0; i < 4; ++i) {
    displs[i] = at;
    at += static_cast<MPI_Aint>(n) * (i < 3 ? 8 : 4) + 4096;
  }
  MPI_Datatype t;
  MPI_Type_create_struct(4, lengths, displs, types, &t);
  const std::int64_t packed = std::int64_t{n} * (3 * 8 + 4);
  return {"soa_struct_xyz_id", commit(t), 1, packed / 4, 4};
}

// Array of structs {int id; double x, y, z;}, 32768 of them: two runs per element.
Case aos_struct() {
  constexpr int n = 32768;
  const int lengths[2] = {1, 3};
  const MPI_Aint displs[2] = {0, 8};
  const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Datatype s, t;
  MPI_Type_create_struct(2, lengths, displs, types, &s);
  MPI_Type_create_resized(s, 0, 32, &t);
  MPI_Type_free(&s);
  return {"aos_struct_id_xyz", commit(t), n, 14, 2 * n};
}

std::vector<Case (*)()> case_builders() {
  std::vector<Case (*)()> all;
  // Captureless lambdas per parameter: keeps building lazy, one case's memory at a time.
#define STRIDER_TEMPI(b)                             \
  all.push_back([] { return tempi2d(b, 1 << 10); }); \
  all.push_back([] { return tempi2d(b, 1 << 20); }); \
  all.push_back([] { return tempi2d(b, 4 << 20); });
  STRIDER_TEMPI(1)
  STRIDER_TEMPI(2)
  STRIDER_TEMPI(4)
  STRIDER_TEMPI(8)
  STRIDER_TEMPI(32)
  STRIDER_TEMPI(64)
  STRIDER_TEMPI(128)
  STRIDER_TEMPI(256)
  STRIDER_TEMPI(512)
#undef STRIDER_TEMPI
  for (auto f :
       {+[] { return face3d(0, 1); }, +[] { return face3d(0, 3); }, +[] { return face3d(1, 1); },
        +[] { return face3d(1, 3); }, +[] { return face3d(2, 1); }, +[] { return face3d(2, 3); }}) {
    all.push_back(f);
  }
  all.push_back(contiguous_1mib);
  all.push_back(indexed_irregular);
  all.push_back(soa_struct);
  all.push_back(aos_struct);
  return all;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Mean time of one call over a batch of k calls, in microseconds.
template <class F>
double batch_us(F&& f, int k) {
  const auto t0 = Clock::now();
  for (int i = 0; i < k; ++i) f();
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / k;
}

struct Row {
  double pack_s, pack_m, unpack_s, unpack_m;
  bool served, pack_same, unpack_same;
};

Row run_case(const Case& c, const Settings& s, GetStats get) {
  MPI_Comm comm = MPI_COMM_WORLD;
  MPI_Aint lb, extent, true_lb, true_extent;
  MPI_Type_get_extent(c.type, &lb, &extent);
  MPI_Type_get_true_extent(c.type, &true_lb, &true_extent);
  const auto span = static_cast<std::size_t>(true_lb + true_extent + (c.count - 1) * extent);
  int packed_size = 0;
  MPI_Pack_size(c.count, c.type, comm, &packed_size);

  Buffer in(span), out(span), packed_s(static_cast<std::size_t>(packed_size)),
      packed_m(static_cast<std::size_t>(packed_size));
  fill_random(in, 1);
  std::memset(packed_s.get(), 0, packed_s.size);
  std::memset(packed_m.get(), 0, packed_m.size);

  strider_stats before{}, after{};
  if (get) get(&before, sizeof before);
  std::uint64_t pack_calls = 0, unpack_calls = 0;

  // Each lambda is one call as an application would make it, position starting at 0.
  auto strider_pack = [&] {
    int pos = 0;
    MPI_Pack(in.get(), c.count, c.type, packed_s.get(), packed_size, &pos, comm);
    ++pack_calls;
    return pos;
  };
  auto mpi_pack = [&] {
    int pos = 0;
    PMPI_Pack(in.get(), c.count, c.type, packed_m.get(), packed_size, &pos, comm);
    return pos;
  };
  auto strider_unpack = [&] {
    int pos = 0;
    MPI_Unpack(packed_m.get(), packed_size, &pos, out.get(), c.count, c.type, comm);
    ++unpack_calls;
  };
  auto mpi_unpack = [&] {
    int pos = 0;
    PMPI_Unpack(packed_m.get(), packed_size, &pos, out.get(), c.count, c.type, comm);
  };

  Row r{};
  const int pos_s = strider_pack(), pos_m = mpi_pack();
  r.pack_same = pos_s == pos_m &&
                std::memcmp(packed_s.get(), packed_m.get(), static_cast<std::size_t>(pos_m)) == 0;
  // Both unpacks into a zeroed buffer: equal digests mean equal bytes, gaps included.
  std::memset(out.get(), 0, out.size);
  mpi_unpack();
  const auto want = digest(out);
  std::memset(out.get(), 0, out.size);
  strider_unpack();
  r.unpack_same = digest(out) == want;

  // Batch size per operation, from one call each (the calls above warmed the caches).
  auto calibrate = [&](auto& f) {
    const double t = batch_us(f, 1);
    return static_cast<int>(std::clamp(s.batch_us / std::max(t, 1e-3), 1.0, 100000.0));
  };
  const int k_ps = calibrate(strider_pack), k_pm = calibrate(mpi_pack),
            k_us = calibrate(strider_unpack), k_um = calibrate(mpi_unpack);

  // Interleaved, so drift (frequency, other load) hits both engines alike.
  std::vector<double> ps, pm, us, um;
  const auto start = Clock::now();
  for (int rep = 0;; ++rep) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (rep >= s.min_reps && (rep >= s.max_reps || elapsed > s.budget_s)) break;
    ps.push_back(batch_us(strider_pack, k_ps));
    pm.push_back(batch_us(mpi_pack, k_pm));
    us.push_back(batch_us(strider_unpack, k_us));
    um.push_back(batch_us(mpi_unpack, k_um));
  }
  r.pack_s = median(ps);
  r.pack_m = median(pm);
  r.unpack_s = median(us);
  r.unpack_m = median(um);

  if (get) {
    get(&after, sizeof after);
    r.served = after.packs_host - before.packs_host == pack_calls &&
               after.unpacks_host - before.unpacks_host == unpack_calls;
  }
  return r;
}

void usage(const char* argv0) {
  std::printf(
      "usage: %s [--quick] [--filter TEXT] [--out FILE]\n"
      "Times MPI_Pack/MPI_Unpack (Strider's CPU engine when run with\n"
      "LD_PRELOAD=libstrider.so STRIDER_HOST_ENGINE=on) against PMPI_Pack/PMPI_Unpack (the\n"
      "system MPI) and writes CSV to FILE or stdout. Times are medians in microseconds;\n"
      "speedup = MPI time / Strider time.\n"
      "  --quick        a few repetitions per case (smoke test)\n"
      "  --filter TEXT  only cases whose name contains TEXT\n"
      "  --out FILE     write the CSV to FILE\n",
      argv0);
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  const char* out_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      usage(argv[0]);
      return 0;
    } else if (arg == "--quick") {
      s.min_reps = 3;
      s.max_reps = 5;
      s.budget_s = 0.01;
    } else if (arg == "--filter" && i + 1 < argc) {
      s.filter = argv[++i];
    } else if (arg == "--out" && i + 1 < argc) {
      out_path = argv[++i];
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n", argv[i]);
      usage(argv[0]);
      return 2;
    }
  }

  MPI_Init(&argc, &argv);
  FILE* out = out_path ? std::fopen(out_path, "w") : stdout;
  if (out == nullptr) {
    std::perror(out_path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const auto get = reinterpret_cast<GetStats>(dlsym(RTLD_DEFAULT, "strider_get_stats_sized"));
  if (!get) std::fprintf(stderr, "warning: Strider is not loaded; MPI_Pack is the MPI's own\n");

  std::fprintf(out,
               "mpi,case,packed_bytes,block_bytes,blocks,strider_pack_us,mpi_pack_us,"
               "pack_speedup,strider_unpack_us,mpi_unpack_us,unpack_speedup,strider_served\n");
  for (auto build : case_builders()) {
    Case c = build();
    if (c.name.find(s.filter) == std::string::npos) {
      MPI_Type_free(&c.type);
      continue;
    }
    const Row r = run_case(c, s, get);
    int packed = 0;
    MPI_Pack_size(c.count, c.type, MPI_COMM_WORLD, &packed);
    std::fprintf(out, "%s,%s,%d,%lld,%lld,%.3f,%.3f,%.2f,%.3f,%.3f,%.2f,%d\n", mpi_name(),
                 c.name.c_str(), packed, static_cast<long long>(c.block_bytes),
                 static_cast<long long>(c.blocks), r.pack_s, r.pack_m, r.pack_m / r.pack_s,
                 r.unpack_s, r.unpack_m, r.unpack_m / r.unpack_s, r.served ? 1 : 0);
    // A warning row in the same columns, so the CSV stays loadable.
    for (auto [same, what] : {std::pair{r.pack_same, "packed-bytes-differ"},
                              std::pair{r.unpack_same, "unpacked-bytes-differ"}}) {
      if (same) continue;
      std::fprintf(out, "%s,WARNING:%s:%s,,,,,,,,,,\n", mpi_name(), c.name.c_str(), what);
      std::fprintf(stderr, "WARNING: %s: %s between Strider and the MPI\n", c.name.c_str(), what);
    }
    if (!r.served) std::fprintf(stderr, "note: %s not served by Strider\n", c.name.c_str());
    std::fflush(out);
    MPI_Type_free(&c.type);
  }
  if (out != stdout) std::fclose(out);
  MPI_Finalize();
  return 0;
}
