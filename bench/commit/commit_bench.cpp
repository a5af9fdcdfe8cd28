// Commit-time benchmark: how long create + MPI_Type_commit + MPI_Type_free takes per
// construction. Run once without and once with LD_PRELOAD=libstrider.so; the difference is the
// cost of Strider decoding and planning each committed type. Block-list types (indexed, hindexed,
// indexed_block, struct) of 10 to 10^6 entries show what a commit costs per entry.
#include <dlfcn.h>
#include <mpi.h>
#include <strider/strider.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../common/mpi_name.hpp"

namespace {

using strider::bench::mpi_name;

using GetStats = int (*)(strider_stats*, size_t);

// Strider is only present when preloaded; looked up at run time so one binary serves both runs.
GetStats strider_stats_fn() {
  return reinterpret_cast<GetStats>(dlsym(RTLD_DEFAULT, "strider_get_stats_sized"));
}

// Builds the type to commit; intermediates go into `temps`, freed after the commit.
using Build = std::function<MPI_Datatype(std::vector<MPI_Datatype>& temps)>;

struct Construction {
  std::string name;
  int depth;  // constructor nesting levels above the named types
  Build build;
  long entries = 0;  // blocks in the type's lists (0: not a block-list type)
};

MPI_Datatype keep(std::vector<MPI_Datatype>& temps, MPI_Datatype t) {
  temps.push_back(t);
  return t;
}

// The 100x13x47-byte box inside a 256x512x1024-byte array (x fastest), three ways.
MPI_Datatype box_subarray3d(std::vector<MPI_Datatype>&) {
  const int sizes[3] = {1024, 512, 256}, sub[3] = {47, 13, 100}, starts[3] = {0, 0, 0};
  MPI_Datatype t;
  MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_BYTE, &t);
  return t;
}

MPI_Datatype box_subarray2d_hvector(std::vector<MPI_Datatype>& temps) {
  const int sizes[2] = {512, 256}, sub[2] = {13, 100}, starts[2] = {0, 0};
  MPI_Datatype plane, t;
  MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_BYTE, &plane);
  MPI_Type_create_hvector(47, 1, 256 * 512, keep(temps, plane), &t);
  return t;
}

MPI_Datatype box_vector_hvector_hvector(std::vector<MPI_Datatype>& temps) {
  MPI_Datatype row, plane, t;
  MPI_Type_vector(100, 1, 1, MPI_BYTE, &row);
  MPI_Type_create_hvector(13, 1, 256, keep(temps, row), &plane);
  MPI_Type_create_hvector(47, 1, 256 * 512, keep(temps, plane), &t);
  return t;
}

MPI_Datatype plain_vector(std::vector<MPI_Datatype>&) {
  MPI_Datatype t;
  MPI_Type_vector(1024, 8, 512, MPI_BYTE, &t);
  return t;
}

MPI_Datatype contiguous_floats(std::vector<MPI_Datatype>&) {
  MPI_Datatype t;
  MPI_Type_contiguous(4, MPI_FLOAT, &t);
  return t;
}

// 16 blocks with irregular lengths and gaps (fixed, so every run sees the same type).
MPI_Datatype indexed16(std::vector<MPI_Datatype>&) {
  const int lengths[16] = {3, 1, 7, 2, 5, 11, 1, 4, 9, 2, 6, 1, 13, 3, 8, 2};
  int displs[16];
  for (int i = 0, at = 0; i < 16; ++i) {
    displs[i] = at;
    at += lengths[i] + 1 + (i * 7) % 5;
  }
  MPI_Datatype t;
  MPI_Type_indexed(16, lengths, displs, MPI_INT, &t);
  return t;
}

MPI_Datatype struct_int_double_vector(std::vector<MPI_Datatype>& temps) {
  MPI_Datatype vec, t;
  MPI_Type_vector(16, 1, 4, MPI_INT, &vec);
  const int lengths[3] = {1, 1, 1};
  const MPI_Aint displs[3] = {0, 8, 16};
  const MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, keep(temps, vec)};
  MPI_Type_create_struct(3, lengths, displs, types, &t);
  return t;
}

// contiguous(hvector(vector(indexed))).
MPI_Datatype nested_depth4(std::vector<MPI_Datatype>& temps) {
  const int lengths[4] = {2, 1, 3, 1}, displs[4] = {0, 3, 5, 10};
  MPI_Datatype idx, vec, hvec, t;
  MPI_Type_indexed(4, lengths, displs, MPI_INT, &idx);
  MPI_Type_vector(8, 1, 2, keep(temps, idx), &vec);
  MPI_Type_create_hvector(4, 1, 4096, keep(temps, vec), &hvec);
  MPI_Type_contiguous(2, keep(temps, hvec), &t);
  return t;
}

// Block lists of MPI_INTs: `lengths` and increasing `displs` (in ints), built once per size so
// every repetition commits the same type. Irregular: random lengths 1..8 and random gaps, so
// runs of equal stride are short. Runs: blocks of 4 ints every 8 ints, in runs of 256 with a
// random jump between runs, which run detection should collapse to one stream per run.
struct BlockList {
  std::vector<int> lengths;
  std::vector<int> displs;
};

BlockList irregular_blocks(long n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> len(1, 8), gap(0, 7);
  BlockList b;
  int at = 0;
  for (long i = 0; i < n; ++i) {
    b.lengths.push_back(len(rng));
    b.displs.push_back(at);
    at += b.lengths.back() + gap(rng);
  }
  return b;
}

BlockList run_blocks(long n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> jump(1, 64);
  BlockList b;
  int at = 0;
  for (long i = 0; i < n; ++i) {
    if (i > 0 && i % 256 == 0) at += jump(rng);
    b.lengths.push_back(4);
    b.displs.push_back(at);
    at += 8;
  }
  return b;
}

std::vector<MPI_Aint> byte_displs(const std::vector<int>& displs) {
  std::vector<MPI_Aint> out(displs.size());
  for (std::size_t i = 0; i < displs.size(); ++i) out[i] = MPI_Aint{4} * displs[i];
  return out;
}

void add_block_lists(std::vector<Construction>& all) {
  for (long n : {10L, 100L, 1000L, 10000L, 100000L, 1000000L}) {
    const std::string sz = std::to_string(n);
    auto irr = std::make_shared<BlockList>(irregular_blocks(n, 1));
    auto hd = std::make_shared<std::vector<MPI_Aint>>(byte_displs(irr->displs));
    all.push_back({"indexed_random_" + sz, 1,
                   [irr](std::vector<MPI_Datatype>&) {
                     MPI_Datatype t;
                     MPI_Type_indexed(static_cast<int>(irr->lengths.size()), irr->lengths.data(),
                                      irr->displs.data(), MPI_INT, &t);
                     return t;
                   },
                   n});
    all.push_back({"hindexed_random_" + sz, 1,
                   [irr, hd](std::vector<MPI_Datatype>&) {
                     MPI_Datatype t;
                     MPI_Type_create_hindexed(static_cast<int>(irr->lengths.size()),
                                              irr->lengths.data(), hd->data(), MPI_INT, &t);
                     return t;
                   },
                   n});
    all.push_back({"indexed_block_random_" + sz, 1,
                   [irr](std::vector<MPI_Datatype>&) {
                     MPI_Datatype t;
                     MPI_Type_create_indexed_block(static_cast<int>(irr->displs.size()), 3,
                                                   irr->displs.data(), MPI_INT, &t);
                     return t;
                   },
                   n});
    // Two hindexed halves of n/2 entries each (at least 1), the second placed after the first.
    auto half = std::make_shared<BlockList>(irregular_blocks(std::max(1L, n / 2), 2));
    auto half_d = std::make_shared<std::vector<MPI_Aint>>(byte_displs(half->displs));
    all.push_back({"struct_2_hindexed_random_" + sz, 2,
                   [half, half_d](std::vector<MPI_Datatype>& temps) {
                     const int k = static_cast<int>(half->lengths.size());
                     MPI_Datatype a, b, t;
                     MPI_Type_create_hindexed(k, half->lengths.data(), half_d->data(), MPI_INT, &a);
                     MPI_Type_create_hindexed(k, half->lengths.data(), half_d->data(), MPI_INT, &b);
                     const int lengths[2] = {1, 1};
                     const MPI_Aint displs[2] = {0, 4 * (MPI_Aint{half->displs.back()} + 16)};
                     const MPI_Datatype types[2] = {keep(temps, a), keep(temps, b)};
                     MPI_Type_create_struct(2, lengths, displs, types, &t);
                     return t;
                   },
                   2 * std::max(1L, n / 2)});
    auto runs = std::make_shared<BlockList>(run_blocks(n, 3));
    auto runs_d = std::make_shared<std::vector<MPI_Aint>>(byte_displs(runs->displs));
    all.push_back({"hindexed_runs256_" + sz, 1,
                   [runs, runs_d](std::vector<MPI_Datatype>&) {
                     MPI_Datatype t;
                     MPI_Type_create_hindexed(static_cast<int>(runs->lengths.size()),
                                              runs->lengths.data(), runs_d->data(), MPI_INT, &t);
                     return t;
                   },
                   n});
  }
}

const std::vector<Construction>& constructions() {
  static const std::vector<Construction> all = [] {
    std::vector<Construction> v = {
        {"box_subarray3d", 1, box_subarray3d},
        {"box_subarray2d_hvector", 2, box_subarray2d_hvector},
        {"box_vector_hvector_hvector", 3, box_vector_hvector_hvector},
        {"vector_1024x8_stride512", 1, plain_vector},
        {"contiguous_4_float", 1, contiguous_floats},
        {"indexed_16_irregular", 1, indexed16},
        {"struct_int_double_vector", 2, struct_int_double_vector},
        {"nested_depth4", 4, nested_depth4},
    };
    add_block_lists(v);
    return v;
  }();
  return all;
}

// One timed repetition: everything an application pays to get a committed type and drop it.
double once_us(const Build& build) {
  std::vector<MPI_Datatype> temps;
  const auto t0 = std::chrono::steady_clock::now();
  MPI_Datatype t = build(temps);
  MPI_Type_commit(&t);
  for (auto& tmp : temps) MPI_Type_free(&tmp);
  MPI_Type_free(&t);
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count();
}

double percentile(std::vector<double> v, double q) {
  const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

// Whether Strider planned the construction or left it to the MPI (stderr, for the summary).
const char* strider_verdict(GetStats get, const Build& build) {
  strider_stats before{}, after{};
  get(&before, sizeof before);
  once_us(build);
  get(&after, sizeof after);
  if (after.types_planned > before.types_planned) return "planned";
  if (after.types_unsupported > before.types_unsupported) return "unsupported";
  return "not seen";
}

void usage(const char* argv0) {
  std::printf(
      "usage: %s [--quick] [--reps N] [--out FILE] [--only TEXT] [--mpi-version]\n"
      "Times create + MPI_Type_commit + MPI_Type_free per datatype construction and writes\n"
      "CSV (mpi,strider,construction,depth,median_us,p90_us,reps,entries,per_entry_ns) to FILE\n"
      "or stdout; per_entry_ns = median / entries for block-list types (0 otherwise).\n"
      "Run it with and without LD_PRELOAD=libstrider.so to see what Strider adds per commit.\n"
      "  --quick        50 repetitions (smoke test)\n"
      "  --reps N       repetitions per construction (default 2000, after a warm-up); fewer\n"
      "                 (at least 3) where N would take more than about a second\n"
      "  --out FILE     write the CSV to FILE\n"
      "  --only TEXT    only the constructions whose name contains TEXT\n"
      "  --mpi-version  print the MPI library version (first line) and exit\n",
      argv0);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 2000;
  bool version_only = false;
  const char* out_path = nullptr;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      usage(argv[0]);
      return 0;
    } else if (arg == "--quick") {
      reps = 50;
    } else if (arg == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--out" && i + 1 < argc) {
      out_path = argv[++i];
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (arg == "--mpi-version") {
      version_only = true;
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n", argv[i]);
      usage(argv[0]);
      return 2;
    }
  }

  MPI_Init(&argc, &argv);
  if (version_only) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    std::string v(version, static_cast<std::size_t>(len));
    v = v.substr(0, v.find('\n'));
    std::replace(v.begin(), v.end(), '\t', ' ');
    std::printf("%s\n", v.c_str());
    MPI_Finalize();
    return 0;
  }

  FILE* out = out_path ? std::fopen(out_path, "w") : stdout;
  if (out == nullptr) {
    std::perror(out_path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const GetStats get = strider_stats_fn();
  std::fprintf(out, "mpi,strider,construction,depth,median_us,p90_us,reps,entries,per_entry_ns\n");
  for (const auto& c : constructions()) {
    if (c.name.find(only) == std::string::npos) continue;
    if (get) {
      std::fprintf(stderr, "# strider: %s %s\n", c.name.c_str(), strider_verdict(get, c.build));
    }
    // Warm-up: first-touch allocations in the MPI and in Strider's plan cache. Large types get
    // fewer repetitions so that each construction takes about a second.
    const double first_us = once_us(c.build);
    const int n = std::clamp(static_cast<int>(1e6 / std::max(first_us, 1e-3)), 3, reps);
    for (int i = 0; i < std::max(std::min(10, n), n / 10); ++i) once_us(c.build);
    std::vector<double> t(static_cast<std::size_t>(n));
    for (auto& x : t) x = once_us(c.build);
    const double median = percentile(t, 0.5);
    std::fprintf(out, "%s,%d,%s,%d,%.3f,%.3f,%d,%ld,%.2f\n", mpi_name(), get ? 1 : 0,
                 c.name.c_str(), c.depth, median, percentile(t, 0.9), n, c.entries,
                 c.entries > 0 ? median * 1e3 / static_cast<double>(c.entries) : 0.0);
    std::fflush(out);
  }
  if (out != stdout) std::fclose(out);
  MPI_Finalize();
  return 0;
}
