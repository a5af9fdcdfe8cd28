#include "mpi_test_support.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>

namespace strider::testing {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

int node_local_rank() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local_rank = 0;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  return local_rank;
}

void WorldCommTest::SetUp() {
  MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

void WorldCommTest::TearDown() { MPI_Comm_free(&comm_); }

bool strider_loaded() { return dlsym(RTLD_DEFAULT, "strider_get_stats") != nullptr; }

bool spare_cpu() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  return sched_getaffinity(0, sizeof cpus, &cpus) != 0 || CPU_COUNT(&cpus) > 1;
}

bool strider_defers_sends() {
  if (!strider_loaded() || env_is("STRIDER_BURST", "0")) return false;
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  return provided != MPI_THREAD_MULTIPLE || (!env_is("STRIDER_PROGRESS_US", "0") && spare_cpu());
}

strider_stats stats() {
  strider_stats s{};
  auto* get = reinterpret_cast<int (*)(strider_stats*, size_t)>(
      dlsym(RTLD_DEFAULT, "strider_get_stats_sized"));
  EXPECT_NE(get, nullptr) << "libstrider is not loaded (LD_PRELOAD or link order)";
  if (get) EXPECT_EQ(get(&s, sizeof s), static_cast<int>(sizeof s)) << "an older libstrider";
  return s;
}

std::string describe(MPI_Datatype type) {
  using Describe = int (*)(MPI_Datatype, char*, int);
  auto* fn = reinterpret_cast<Describe>(dlsym(RTLD_DEFAULT, "strider_describe_type"));
  if (!fn) return "";
  const int n = fn(type, nullptr, 0);
  if (n < 0) return "";
  std::string text(static_cast<std::size_t>(n) + 1, '\0');
  fn(type, text.data(), n + 1);
  text.resize(static_cast<std::size_t>(n));
  return text;
}

void set_p2p_host(bool pack) {
  using Fn = int (*)(int);
  static auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "strider_set_p2p_host"));
  if (fn) fn(pack ? 1 : 0);
}

long env_long(const char* name, long fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtol(v, nullptr, 10) : fallback;
}

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, value) == 0;
}

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  std::uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

MPI_Datatype strided_int_type() {
  static MPI_Datatype t = [] {
    MPI_Datatype r;
    MPI_Type_create_resized(MPI_INT, 0, 8, &r);
    MPI_Type_commit(&r);
    return r;
  }();
  return t;
}

int thread_level_asked(int fallback) {
  const char* v = std::getenv("STRIDER_TEST_THREAD");
  if (v == nullptr) return fallback;
  if (std::strcmp(v, "single") == 0) return MPI_THREAD_SINGLE;
  if (std::strcmp(v, "funneled") == 0) return MPI_THREAD_FUNNELED;
  if (std::strcmp(v, "serialized") == 0) return MPI_THREAD_SERIALIZED;
  if (std::strcmp(v, "multiple") == 0) return MPI_THREAD_MULTIPLE;
  std::fprintf(stderr, "STRIDER_TEST_THREAD=%s unknown (single|funneled|serialized|multiple)\n", v);
  return fallback;
}

StridedInts::StridedInts(int ints) {
  MPI_Type_vector(ints, 1, 2, MPI_INT, &type);
  MPI_Type_commit(&type);
}

StridedInts::~StridedInts() { MPI_Type_free(&type); }

std::vector<int> message_ints(int k, int ints) {
  std::vector<int> v(2 * static_cast<std::size_t>(ints));
  std::iota(v.begin(), v.end(), 1000 * (k + 1));
  return v;
}

ElementBuffer element_buffer(MPI_Datatype type, int count, std::mt19937_64& rng) {
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  MPI_Type_get_extent(type, &lb, &extent);
  MPI_Type_get_true_extent(type, &true_lb, &true_extent);
  std::int64_t lo = true_lb, hi = true_lb + true_extent;
  for (int e = 1; e < count; ++e) {
    lo = std::min<std::int64_t>(lo, true_lb + e * extent);
    hi = std::max<std::int64_t>(hi, true_lb + true_extent + e * extent);
  }
  constexpr std::int64_t kMargin = 64;
  ElementBuffer b;
  b.bytes.resize(static_cast<std::size_t>(hi - lo + 2 * kMargin));
  for (auto& x : b.bytes) x = static_cast<unsigned char>(rng());
  b.origin_offset = kMargin - lo;
  return b;
}

std::vector<unsigned char> reference_pack(const typespec::Layout& layout, MPI_Aint extent,
                                          int count, const unsigned char* origin) {
  std::vector<unsigned char> out;
  for (int e = 0; e < count; ++e) {
    for (const typespec::Run& run : layout.runs) {
      const unsigned char* p = origin + e * extent + run.offset;
      out.insert(out.end(), p, p + run.length);
    }
  }
  return out;
}

void reference_unpack(const typespec::Layout& layout, MPI_Aint extent, int count,
                      const unsigned char* packed, unsigned char* origin) {
  for (int e = 0; e < count; ++e) {
    for (const typespec::Run& run : layout.runs) {
      std::memcpy(origin + e * extent + run.offset, packed, static_cast<std::size_t>(run.length));
      packed += run.length;
    }
  }
}

bool waitall_error_hangs() {
  if (!on_open_mpi()) return false;
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  return level != MPI_THREAD_SINGLE;  // FUNNELED and SERIALIZED hang as MULTIPLE does
}

namespace {

struct LibraryIdentity {
  bool open_mpi = false, mpich = false;
  int major = 0, minor = 0;
};

// "Open MPI v4.1.4, ..." or "MPICH Version:  4.0.2 ...".
const LibraryIdentity& library_identity() {
  static const LibraryIdentity id = [] {
    LibraryIdentity i;
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int len = 0;
    MPI_Get_library_version(text, &len);
    const std::string s(text, static_cast<std::size_t>(len > 0 ? len : 0));
    std::size_t at = std::string::npos;
    if (s.rfind("Open MPI", 0) == 0) {
      i.open_mpi = true;
      at = s.find('v');
    } else if (s.find("MPICH") != std::string::npos) {
      i.mpich = true;
      at = s.find("Version:");
      if (at != std::string::npos) at += 7;
    }
    if (at != std::string::npos) {
      while (at < s.size() && !std::isdigit(static_cast<unsigned char>(s[at]))) ++at;
      char* end = nullptr;
      i.major = static_cast<int>(std::strtol(s.c_str() + at, &end, 10));
      if (end != nullptr && *end == '.') i.minor = std::atoi(end + 1);
    }
    return i;
  }();
  return id;
}

}  // namespace

bool on_open_mpi() { return library_identity().open_mpi; }
bool on_mpich() { return library_identity().mpich; }

int error_class(int rc) {
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  return cls;
}
int mpi_major() { return library_identity().major; }
int mpi_minor() { return library_identity().minor; }

bool wait_after_get_status_empties_persistent() { return on_mpich() && mpi_major() >= 5; }

int wait_or_test_all(bool wait, int n, MPI_Request* requests, MPI_Status* statuses) {
  if (wait) return MPI_Waitall(n, requests, statuses);
  int flag = 0, rc = MPI_SUCCESS;
  while (!flag && rc == MPI_SUCCESS) rc = MPI_Testall(n, requests, &flag, statuses);
  return rc;
}

}  // namespace strider::testing
