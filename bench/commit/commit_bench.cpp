// Commit-time benchmark: how long create + MPI_Type_commit + MPI_Type_free takes per
// construction. Run once without and once with LD_PRELOAD=libstrider.so; the difference is the
// cost of Strider decoding and planning each committed type.
#include <dlfcn.h>
#include <mpi.h>
#include <strider/strider.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "../common/mpi_name.hpp"

namespace {

using strider::bench::kMpiName;

using GetStats = int (*)(strider_stats*);

// Strider is only present when preloaded; looked up at run time so one binary serves both runs.
GetStats strider_stats_fn() {
  return reinterpret_cast<GetStats>(dlsym(RTLD_DEFAULT, "strider_get_stats"));
}

// Builds the type to commit; intermediates go into `temps`, freed after the commit.
using Build = std::function<MPI_Datatype(std::vector<MPI_Datatype>& temps)>;

struct Construction {
  const char* name;
  int depth;  // constructor nesting levels above the named types
  Build build;
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

const std::vector<Construction>& constructions() {
  static const std::vector<Construction> all = {
      {"box_subarray3d", 1, box_subarray3d},
      {"box_subarray2d_hvector", 2, box_subarray2d_hvector},
      {"box_vector_hvector_hvector", 3, box_vector_hvector_hvector},
      {"vector_1024x8_stride512", 1, plain_vector},
      {"contiguous_4_float", 1, contiguous_floats},
      {"indexed_16_irregular", 1, indexed16},
      {"struct_int_double_vector", 2, struct_int_double_vector},
      {"nested_depth4", 4, nested_depth4},
  };
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
  get(&before);
  once_us(build);
  get(&after);
  if (after.types_planned > before.types_planned) return "planned";
  if (after.types_unsupported > before.types_unsupported) return "unsupported";
  return "not seen";
}

void usage(const char* argv0) {
  std::printf(
      "usage: %s [--quick] [--reps N] [--out FILE] [--mpi-version]\n"
      "Times create + MPI_Type_commit + MPI_Type_free per datatype construction and writes\n"
      "CSV (mpi,strider,construction,depth,median_us,p90_us,reps) to FILE or stdout.\n"
      "Run it with and without LD_PRELOAD=libstrider.so to see what Strider adds per commit.\n"
      "  --quick        50 repetitions (smoke test)\n"
      "  --reps N       repetitions per construction (default 2000, after a warm-up)\n"
      "  --out FILE     write the CSV to FILE\n"
      "  --mpi-version  print the MPI library version (first line) and exit\n",
      argv0);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 2000;
  bool version_only = false;
  const char* out_path = nullptr;
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
  std::fprintf(out, "mpi,strider,construction,depth,median_us,p90_us,reps\n");
  for (const auto& c : constructions()) {
    if (get) std::fprintf(stderr, "# strider: %s %s\n", c.name, strider_verdict(get, c.build));
    // Warm-up: first-touch allocations in the MPI and in Strider's plan cache.
    for (int i = 0; i < std::max(10, reps / 10); ++i) once_us(c.build);
    std::vector<double> t(static_cast<std::size_t>(reps));
    for (auto& x : t) x = once_us(c.build);
    std::fprintf(out, "%s,%d,%s,%d,%.3f,%.3f,%d\n", kMpiName, get ? 1 : 0, c.name, c.depth,
                 percentile(t, 0.5), percentile(t, 0.9), reps);
  }
  if (out != stdout) std::fclose(out);
  MPI_Finalize();
  return 0;
}
