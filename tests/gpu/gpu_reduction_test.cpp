// Reductions computed on the GPUs (src/collective/same_node_reduce.hpp) against a C
// reference: every predefined type and op the kernels take, on random full-range values
// (integer sums and products overflow and must wrap as C's do; floating-point values have
// random mantissas, so the order of the fold shows), in all six blocking reductions, in place
// and not, with random counts, roots and reduce-scatter counts. Every rank builds every rank's
// input from the run's seed and folds them in rank order, the order the kernels use. Bytes
// outside the result (margins, a pair's padding, rank 0's Exscan buffer) must be as they were.
//
// With STRIDER_GPU_REDUCE=1 on one node (no STRIDER_TEST_NODE_SIZE split) every call with
// device buffers must have been computed on the GPUs (strider_stats.reductions_on_gpu); unset,
// whichever path the policy takes is checked as that path; with virtual nodes, none, and the
// results come from the MPI's own op on host copies, in the MPI's order (floating-point sums and
// products are not checked there, nor, on Open MPI 4.1, which saturates them instead of
// wrapping, 8- and 16-bit integer sums and products: open-mpi/ompi#8045).
// Ranks whose buffers differ in kind (device on one, host on another), user ops and derived
// types take the host path together.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

enum class Call { Reduce, Allreduce, ReduceScatter, ReduceScatterBlock, Scan, Exscan };
constexpr Call kCalls[] = {Call::Reduce,        Call::Allreduce,
                           Call::ReduceScatter, Call::ReduceScatterBlock,
                           Call::Scan,          Call::Exscan};
const char* name(Call c) {
  constexpr const char* kNames[] = {"Reduce", "Allreduce", "Reduce_scatter", "Reduce_scatter_block",
                                    "Scan",   "Exscan"};
  return kNames[static_cast<int>(c)];
}

// ---- the C reference --------------------------------------------------------------------------

template <class V>
struct Pair {
  V v;
  int i;
};

// Folds b into a (both one element of T), as C computes it; integers wrap.
template <class T>
using Fold = std::function<T(T, T)>;

template <class T>
T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<std::uint64_t>(static_cast<U>(a)) + static_cast<U>(b));
}
template <class T>
T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<std::uint64_t>(static_cast<U>(a)) * static_cast<U>(b));
}

// One (type, op) case: its MPI handles, its element's C size, the bytes of an element that are
// data (a pair's padding is not), a random value, and the fold.
struct Kind {
  std::string text;
  MPI_Datatype type;
  MPI_Op op;
  int bytes;
  std::vector<std::pair<int, int>> data;  // [offset, length) of the data bytes of an element
  std::function<void(unsigned char*, std::mt19937_64&)> random;
  std::function<void(unsigned char*, const unsigned char*)> fold;  // acc = acc op x
  bool narrow_int_arith = false;                                   // an 8- or 16-bit sum or product
  bool order_sensitive = false;  // a floating-point sum or product
};

template <class T>
Kind scalar(const char* type_name, MPI_Datatype type, const char* op_name, MPI_Op op, Fold<T> f,
            std::function<T(std::mt19937_64&)> value) {
  Kind k;
  k.text = std::string(type_name) + " " + op_name;
  k.type = type;
  k.op = op;
  k.bytes = sizeof(T);
  k.data = {{0, static_cast<int>(sizeof(T))}};
  k.random = [value](unsigned char* p, std::mt19937_64& rng) {
    const T v = value(rng);
    std::memcpy(p, &v, sizeof v);
  };
  k.fold = [f](unsigned char* acc, const unsigned char* x) {
    T a, b;
    std::memcpy(&a, acc, sizeof a);
    std::memcpy(&b, x, sizeof b);
    a = f(a, b);
    std::memcpy(acc, &a, sizeof a);
  };
  const bool arith = op == MPI_SUM || op == MPI_PROD;
  k.narrow_int_arith = std::is_integral_v<T> && sizeof(T) <= 2 && arith;
  k.order_sensitive = std::is_floating_point_v<T> && arith;
  return k;
}

template <class T>
void add_integer(std::vector<Kind>& out, const char* n, MPI_Datatype t, bool byte = false) {
  const auto any = [](std::mt19937_64& rng) { return static_cast<T>(rng()); };
  const auto small = [](std::mt19937_64& rng) { return static_cast<T>(rng() % 3); };  // 0 1 2
  if (!byte) {
    out.push_back(scalar<T>(n, t, "SUM", MPI_SUM, wrap_add<T>, any));
    out.push_back(scalar<T>(n, t, "PROD", MPI_PROD, wrap_mul<T>, any));
    out.push_back(scalar<T>(
        n, t, "MIN", MPI_MIN, [](T a, T b) { return a < b ? a : b; }, any));
    out.push_back(scalar<T>(
        n, t, "MAX", MPI_MAX, [](T a, T b) { return a > b ? a : b; }, any));
    out.push_back(scalar<T>(
        n, t, "LAND", MPI_LAND, [](T a, T b) { return T(a && b); }, small));
    out.push_back(scalar<T>(
        n, t, "LOR", MPI_LOR, [](T a, T b) { return T(a || b); }, small));
    out.push_back(scalar<T>(
        n, t, "LXOR", MPI_LXOR, [](T a, T b) { return T(!a != !b); }, small));
  }
  out.push_back(scalar<T>(
      n, t, "BAND", MPI_BAND, [](T a, T b) { return T(a & b); }, any));
  out.push_back(scalar<T>(
      n, t, "BOR", MPI_BOR, [](T a, T b) { return T(a | b); }, any));
  out.push_back(scalar<T>(
      n, t, "BXOR", MPI_BXOR, [](T a, T b) { return T(a ^ b); }, any));
}

template <class T>
void add_floating(std::vector<Kind>& out, const char* n, MPI_Datatype t) {
  // Random mantissas over a few binades, both signs: sums round, and the order shows.
  const auto value = [](std::mt19937_64& rng) {
    std::uniform_real_distribution<double> d(-8.0, 8.0);
    return static_cast<T>(d(rng));
  };
  out.push_back(scalar<T>(
      n, t, "SUM", MPI_SUM, [](T a, T b) { return a + b; }, value));
  out.push_back(scalar<T>(
      n, t, "PROD", MPI_PROD, [](T a, T b) { return a * b; }, value));
  out.push_back(scalar<T>(
      n, t, "MIN", MPI_MIN, [](T a, T b) { return a < b ? a : b; }, value));
  out.push_back(scalar<T>(
      n, t, "MAX", MPI_MAX, [](T a, T b) { return a > b ? a : b; }, value));
}

template <class V>
void add_pair(std::vector<Kind>& out, const char* n, MPI_Datatype t) {
  for (const bool min : {true, false}) {
    Kind k;
    k.text = std::string(n) + (min ? " MINLOC" : " MAXLOC");
    k.type = t;
    k.op = min ? MPI_MINLOC : MPI_MAXLOC;
    k.bytes = sizeof(Pair<V>);
    k.data = {{0, static_cast<int>(sizeof(V))},
              {static_cast<int>(offsetof(Pair<V>, i)), static_cast<int>(sizeof(int))}};
    k.random = [](unsigned char* p, std::mt19937_64& rng) {
      Pair<V> e;
      std::memset(&e, 0, sizeof e);
      e.v = static_cast<V>(rng() % 4);  // ties are frequent
      e.i = static_cast<int>(rng() % 1000);
      std::memcpy(p, &e.v, sizeof e.v);
      std::memcpy(p + offsetof(Pair<V>, i), &e.i, sizeof e.i);
    };
    k.fold = [min](unsigned char* acc, const unsigned char* x) {
      Pair<V> a, b;
      std::memcpy(&a.v, acc, sizeof a.v);
      std::memcpy(&a.i, acc + offsetof(Pair<V>, i), sizeof a.i);
      std::memcpy(&b.v, x, sizeof b.v);
      std::memcpy(&b.i, x + offsetof(Pair<V>, i), sizeof b.i);
      const bool b_wins = min ? b.v < a.v : b.v > a.v;
      const bool a_wins = min ? a.v < b.v : a.v > b.v;
      if (b_wins)
        a = b;
      else if (!a_wins)
        a.i = std::min(a.i, b.i);
      std::memcpy(acc, &a.v, sizeof a.v);
      std::memcpy(acc + offsetof(Pair<V>, i), &a.i, sizeof a.i);
    };
    out.push_back(k);
  }
}

std::vector<Kind> all_kinds() {
  std::vector<Kind> k;
  add_integer<int>(k, "INT", MPI_INT);
  add_integer<unsigned>(k, "UNSIGNED", MPI_UNSIGNED);
  add_integer<long>(k, "LONG", MPI_LONG);
  add_integer<unsigned long long>(k, "UNSIGNED_LONG_LONG", MPI_UNSIGNED_LONG_LONG);
  add_integer<short>(k, "SHORT", MPI_SHORT);
  add_integer<std::uint16_t>(k, "UINT16_T", MPI_UINT16_T);
  add_integer<signed char>(k, "SIGNED_CHAR", MPI_SIGNED_CHAR);
  add_integer<std::int8_t>(k, "INT8_T", MPI_INT8_T);
  add_integer<unsigned char>(k, "UNSIGNED_CHAR", MPI_UNSIGNED_CHAR);
  add_integer<std::int64_t>(k, "INT64_T", MPI_INT64_T);
  add_integer<unsigned char>(k, "BYTE", MPI_BYTE, true);
  add_floating<float>(k, "FLOAT", MPI_FLOAT);
  add_floating<double>(k, "DOUBLE", MPI_DOUBLE);
  const auto bit = [](std::mt19937_64& rng) { return static_cast<unsigned char>(rng() & 1); };
  k.push_back(scalar<unsigned char>(
      "C_BOOL", MPI_C_BOOL, "LAND", MPI_LAND,
      [](unsigned char a, unsigned char b) { return a && b; }, bit));
  k.push_back(scalar<unsigned char>(
      "C_BOOL", MPI_C_BOOL, "LOR", MPI_LOR, [](unsigned char a, unsigned char b) { return a || b; },
      bit));
  k.push_back(scalar<unsigned char>(
      "C_BOOL", MPI_C_BOOL, "LXOR", MPI_LXOR,
      [](unsigned char a, unsigned char b) { return static_cast<unsigned char>(!a != !b); }, bit));
  add_pair<float>(k, "FLOAT_INT", MPI_FLOAT_INT);
  add_pair<double>(k, "DOUBLE_INT", MPI_DOUBLE_INT);
  add_pair<long>(k, "LONG_INT", MPI_LONG_INT);
  add_pair<int>(k, "2INT", MPI_2INT);
  add_pair<short>(k, "SHORT_INT", MPI_SHORT_INT);
  return k;
}

// ---- one case ---------------------------------------------------------------------------------

// The path a call is expected to take.
enum class Path { Gpu, Host, Either };

// On one node the GPUs when STRIDER_GPU_REDUCE=1, the policy's choice when unset; never across
// virtual nodes.
Path expected_path(int size) {
  const long split = env_long("STRIDER_TEST_NODE_SIZE", 0);
  if (split > 0 && split < size) return Path::Host;
  const long forced = env_long("STRIDER_GPU_REDUCE", -1);
  return forced == 1 ? Path::Gpu : forced == 0 ? Path::Host : Path::Either;
}

// open-mpi/ompi#8045
bool mpi_saturates_narrow_sums() { return on_open_mpi() && mpi_major() < 5; }

void check_cuda(cudaError_t rc) { ASSERT_EQ(rc, cudaSuccess) << cudaGetErrorString(rc); }

struct DeviceBytes {
  explicit DeviceBytes(std::size_t n, bool host) : host_(host) {
    if (host) {
      data = static_cast<unsigned char*>(std::malloc(n ? n : 1));
    } else {
      void* p = nullptr;
      check_cuda(cudaMalloc(&p, n ? n : 1));
      data = static_cast<unsigned char*>(p);
    }
  }
  ~DeviceBytes() {
    if (host_)
      std::free(data);
    else
      cudaFree(data);
  }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  unsigned char* data = nullptr;

 private:
  bool host_;
};

void put(unsigned char* to, const std::vector<unsigned char>& from) {
  check_cuda(cudaMemcpy(to, from.data(), from.size(), cudaMemcpyDefault));
}
std::vector<unsigned char> get(const unsigned char* from, std::size_t n) {
  std::vector<unsigned char> out(n);
  check_cuda(cudaMemcpy(out.data(), from, n, cudaMemcpyDefault));
  return out;
}

class GpuReductions : public WorldCommTest {
 protected:
  // Runs `call` of `kind` on this rank with the case's random shape; `host_here`: this rank's
  // buffers in host memory. Returns whether the result was checked.
  void run(const Kind& kind, Call call, std::uint64_t key, bool host_here, Path expect) {
    std::mt19937_64 shape(mix_seed(env_long("STRIDER_TEST_SEED", 1), 31, key));
    const int count = static_cast<int>(shape() % 3 == 0 ? 1 + shape() % 4 : 1 + shape() % 5000);
    const int root = static_cast<int>(shape() % static_cast<std::uint64_t>(size_));
    std::vector<int> rcounts(size_, count);
    if (call == Call::ReduceScatter) {
      for (int& n : rcounts) n = static_cast<int>(shape() % 700);
      rcounts[0] += 1;  // never nothing at all: the MPI would have nothing to do
    }
    int total = count;
    if (call == Call::ReduceScatter) total = std::accumulate(rcounts.begin(), rcounts.end(), 0);
    if (call == Call::ReduceScatterBlock) total = count * size_;
    const bool in_place = shape() % 2 == 1 && (call != Call::Reduce || rank_ == root);
    const bool scatter = call == Call::ReduceScatter || call == Call::ReduceScatterBlock;
    const int result_count = scatter ? rcounts[rank_] : count;
    int first = 0;  // the input element this rank's result starts at
    for (int k = 0; scatter && k < rank_; ++k) first += rcounts[k];
    int folded = size_;
    if (call == Call::Scan) folded = rank_ + 1;
    if (call == Call::Exscan) folded = rank_;
    const bool has_result = (call != Call::Reduce || rank_ == root) && folded > 0;

    // Every rank's input, from the seed; this rank's in its buffer.
    const int e = kind.bytes;
    std::vector<std::vector<unsigned char>> inputs(size_);
    for (int k = 0; k < size_; ++k) {
      std::mt19937_64 rng(mix_seed(env_long("STRIDER_TEST_SEED", 1), 32, key, k));
      inputs[k].assign(static_cast<std::size_t>(total) * e, 0xA5);
      for (int i = 0; i < total; ++i) kind.random(&inputs[k][static_cast<std::size_t>(i) * e], rng);
    }
    // The receive buffer: a margin of 3 elements each side, random bytes.
    constexpr int kMargin = 3;
    const int recv_elems = (in_place ? total : result_count) + 2 * kMargin;
    std::mt19937_64 brng(mix_seed(env_long("STRIDER_TEST_SEED", 1), 33, key, rank_));
    std::vector<unsigned char> recv_before(static_cast<std::size_t>(recv_elems) * e);
    for (unsigned char& b : recv_before) b = static_cast<unsigned char>(brng());
    if (in_place) {
      std::memcpy(&recv_before[kMargin * e], inputs[rank_].data(), inputs[rank_].size());
    }
    DeviceBytes send(inputs[rank_].size(), host_here), recv(recv_before.size(), host_here);
    if (!in_place) put(send.data, inputs[rank_]);
    put(recv.data, recv_before);
    unsigned char* rb = recv.data + kMargin * e;
    const void* sb = in_place ? MPI_IN_PLACE : send.data;

    const std::uint64_t before = stats().reductions_on_gpu;
    int rc = MPI_ERR_OTHER;
    switch (call) {
      case Call::Reduce:
        rc = MPI_Reduce(sb, rb, count, kind.type, kind.op, root, comm_);
        break;
      case Call::Allreduce:
        rc = MPI_Allreduce(sb, rb, count, kind.type, kind.op, comm_);
        break;
      case Call::ReduceScatter:
        rc = MPI_Reduce_scatter(sb, rb, rcounts.data(), kind.type, kind.op, comm_);
        break;
      case Call::ReduceScatterBlock:
        rc = MPI_Reduce_scatter_block(sb, rb, count, kind.type, kind.op, comm_);
        break;
      case Call::Scan:
        rc = MPI_Scan(sb, rb, count, kind.type, kind.op, comm_);
        break;
      case Call::Exscan:
        rc = MPI_Exscan(sb, rb, count, kind.type, kind.op, comm_);
        break;
    }
    const std::string what = std::string(name(call)) + " of " + std::to_string(count) + " " +
                             kind.text + (in_place ? ", in place" : "") + ", root " +
                             std::to_string(root) + ", rank " + std::to_string(rank_);
    ASSERT_EQ(rc, MPI_SUCCESS) << what;
    const std::uint64_t on_gpu = stats().reductions_on_gpu - before;
    if (expect != Path::Either) {
      EXPECT_EQ(on_gpu, expect == Path::Gpu ? 1u : 0u) << what;
    }
    const bool gpu_path = on_gpu == 1;

    // The expected buffer: as before, with the result's data bytes folded in rank order.
    std::vector<unsigned char> expected = recv_before;
    if (has_result) {
      for (int i = 0; i < result_count; ++i) {
        const std::size_t at = static_cast<std::size_t>(first + i) * e;
        std::vector<unsigned char> acc(inputs[0].begin() + at, inputs[0].begin() + at + e);
        for (int k = 1; k < folded; ++k) kind.fold(acc.data(), &inputs[k][at]);
        unsigned char* to = &expected[static_cast<std::size_t>(kMargin + i) * e];
        for (const auto& [off, len] : kind.data) std::memcpy(to + off, &acc[off], len);
      }
    }
    const std::vector<unsigned char> got = get(recv.data, recv_before.size());
    // The host path folds in the MPI's order, which a floating-point sum or product shows.
    const bool result_checked =
        gpu_path ||
        !(kind.order_sensitive || (mpi_saturates_narrow_sums() && kind.narrow_int_arith));
    // In place, a reduce-scatter's buffer beyond the result and rank 0's Exscan buffer are the
    // MPI's to use: only the margins are checked there.
    const auto checked = [&](std::size_t byte) {
      const std::size_t elem = byte / e;
      if (elem < kMargin || elem >= static_cast<std::size_t>(recv_elems - kMargin)) return true;
      if (call == Call::Exscan && rank_ == 0) return false;
      if (elem >= static_cast<std::size_t>(kMargin + result_count)) return !in_place;
      return result_checked;
    };
    for (std::size_t b = 0; b < got.size(); ++b) {
      if (!checked(b)) continue;
      ASSERT_EQ(static_cast<int>(got[b]), static_cast<int>(expected[b]))
          << what << ": byte " << b << " (element " << b / e - kMargin << ")";
    }
  }
};

TEST_F(GpuReductions, EveryKindEveryCallAgainstC) {
  const Path path = expected_path(size_);
  const std::vector<Kind> kinds = all_kinds();
  int n = 0;
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    for (Call call : kCalls) {
      // Every kind in two calls, every call with every kind over the run's two seeds.
      if ((k + static_cast<int>(call)) % 3 != 0) continue;
      run(kinds[k], call, mix_seed(k, static_cast<int>(call)), false, path);
      if (HasFatalFailure()) return;
      ++n;
    }
  }
  if (rank_ == 0) std::printf("gpu_reduction_test: %d calls checked\n", n);
}

TEST_F(GpuReductions, AllSixCallsOnIntDoubleAndPairs) {
  const Path path = expected_path(size_);
  for (const Kind& kind : all_kinds()) {
    if (kind.text != "INT SUM" && kind.text != "DOUBLE SUM" && kind.text != "DOUBLE_INT MINLOC" &&
        kind.text != "INT8_T SUM") {
      continue;
    }
    for (Call call : kCalls) {
      for (int round = 0; round < 3; ++round) {
        run(kind, call, mix_seed(7, static_cast<int>(call), round, kind.bytes, kind.text.size()),
            false, path);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Host memory on odd ranks: the whole call takes the host path, with the same results.
TEST_F(GpuReductions, MixedMemoryKindsTakeTheHostPathTogether) {
  for (const Kind& kind : all_kinds()) {
    if (kind.text != "INT SUM" && kind.text != "DOUBLE MAX") continue;
    for (Call call : kCalls) {
      run(kind, call, mix_seed(9, static_cast<int>(call), kind.text.size()), rank_ % 2 == 1,
          Path::Host);
      if (HasFatalFailure()) return;
    }
  }
}

// A user op and a derived type have no kernel: the host path, on every rank.
TEST_F(GpuReductions, UserOpsAndDerivedTypesStayOnTheHostPath) {
  MPI_Op op = MPI_OP_NULL;
  MPI_Op_create(
      [](void* in, void* inout, int* len, MPI_Datatype*) {
        for (int i = 0; i < *len; ++i) static_cast<int*>(inout)[i] += static_cast<int*>(in)[i];
      },
      1, &op);
  Kind user = scalar<int>("INT", MPI_INT, "user sum", op, wrap_add<int>,
                          [](std::mt19937_64& rng) { return static_cast<int>(rng() % 1000); });
  for (Call call : kCalls) {
    run(user, call, mix_seed(11, static_cast<int>(call)), false, Path::Host);
    if (HasFatalFailure()) break;
  }
  MPI_Op_free(&op);
}

}  // namespace
}  // namespace strider::testing
