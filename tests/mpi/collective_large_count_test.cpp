// MPI-4's large-count collectives (`_c`), where the MPI has them (MPICH 4): mpi4py calls them
// wherever they exist, so its collectives on GPU buffers reach Strider only through these. Every
// form: blocking, nonblocking and persistent (`_init_c`, started twice). Each call, with
// STRIDER_COLL_HOST=pack, must take Strider's path (collectives_served grows) and, without it,
// reach the MPI as the application made it (collectives_forwarded grows: the MPI's own `_c`
// call, on the application's arrays); either way it must leave the receive buffer as the MPI's
// classic call does on a copy (the oracle, PMPI_). A strided type of ints, random values, two or
// more ranks; the neighbourhood calls on a periodic 1D Cartesian communicator.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

constexpr int kInts = 6;  // elements of the strided type per block (at stride 2: 12 ints)

struct Fixture {
  MPI_Comm comm = MPI_COMM_WORLD;
  MPI_Comm cart = MPI_COMM_NULL;
  MPI_Datatype strided = MPI_DATATYPE_NULL;
  int size = 0, rank = 0;
  Fixture() {
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    MPI_Type_vector(kInts, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    int dims[1] = {size}, periods[1] = {1};
    MPI_Cart_create(comm, 1, dims, periods, 0, &cart);
  }
  ~Fixture() {
    MPI_Type_free(&strided);
    MPI_Comm_free(&cart);
  }
};

// Runs one call as `_c` (Strider) and as the MPI's classic form (the oracle) on equal buffers of
// `blocks` strided blocks each side, and compares the receive buffers.
// `mpis_own`: a call Strider leaves to the MPI whatever its buffers (no path is checked).
using Run = std::function<int(bool large, const int* send, int* recv)>;
void expect_like_the_mpi(const std::string& name, int send_blocks, int recv_blocks, Run run,
                         bool mpis_own = false) {
  SCOPED_TRACE(name);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::mt19937 rng(static_cast<std::uint32_t>(name.size() * 131 + rank));
  std::vector<int> send(static_cast<std::size_t>(2 * kInts * std::max(send_blocks, 1)));
  for (int& v : send) v = static_cast<int>(rng() % 1000);
  std::vector<int> recv(static_cast<std::size_t>(2 * kInts * std::max(recv_blocks, 1)));
  for (int& v : recv) v = -static_cast<int>(rng() % 1000) - 1;
  std::vector<int> expected = recv;
  const char* host = std::getenv("STRIDER_COLL_HOST");
  const bool packed = host != nullptr && std::string(host) == "pack";
  const auto path = [packed] {
    if (!strider_loaded()) return std::uint64_t{0};
    return packed ? stats().collectives_served : stats().collectives_forwarded;
  };
  const std::uint64_t before = path();
  ASSERT_EQ(run(true, send.data(), recv.data()), MPI_SUCCESS);
  if (strider_loaded() && !mpis_own) {
    EXPECT_EQ(path(), before + 1) << (packed ? "not Strider's" : "not forwarded");
  }
  ASSERT_EQ(run(false, send.data(), expected.data()), MPI_SUCCESS);
  EXPECT_EQ(recv, expected);
}

// A nonblocking call's request, waited for.
int waited(int rc, MPI_Request& request) {
  return rc != MPI_SUCCESS ? rc : MPI_Wait(&request, MPI_STATUS_IGNORE);
}

// A persistent call's request, started and waited for `starts` times, then freed.
int started(int rc, MPI_Request& request, int starts = 2) {
  for (int i = 0; rc == MPI_SUCCESS && i < starts; ++i) {
    rc = MPI_Start(&request);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  const int freed = MPI_Request_free(&request);
  return rc != MPI_SUCCESS ? rc : freed;
}

// Whether the MPI is MPICH before 4.3, whose own persistent Gather and Scatter Strider leaves
// alone (calls/persistent.hpp): its Scatter fails or hangs at the second start.
bool mpich_before_4_3() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  const char* at = std::strstr(version, "MPICH Version:");
  int major = 0, minor = 0;
  return at != nullptr && std::sscanf(at + 14, " %d.%d", &major, &minor) == 2 &&
         (major < 4 || (major == 4 && minor < 3));
}

TEST(LargeCount, ScalarCountCalls) {
  if (on_open_mpi()) GTEST_SKIP() << "Open MPI 4.1 has no _c calls";
  const Fixture f;
  const MPI_Datatype t = f.strided;
  const int n = f.size;
  MPI_Request q = MPI_REQUEST_NULL;
  expect_like_the_mpi("Allgather", 1, n, [&](bool c, const int* s, int* r) {
    return c ? MPI_Allgather_c(s, 1, t, r, 1, t, f.comm) : PMPI_Allgather(s, 1, t, r, 1, t, f.comm);
  });
  expect_like_the_mpi("Iallgather", 1, n, [&](bool c, const int* s, int* r) {
    return c ? waited(MPI_Iallgather_c(s, 1, t, r, 1, t, f.comm, &q), q)
             : PMPI_Allgather(s, 1, t, r, 1, t, f.comm);
  });
  expect_like_the_mpi("Alltoall", n, n, [&](bool c, const int* s, int* r) {
    return c ? MPI_Alltoall_c(s, 1, t, r, 1, t, f.comm) : PMPI_Alltoall(s, 1, t, r, 1, t, f.comm);
  });
  expect_like_the_mpi("Ialltoall", n, n, [&](bool c, const int* s, int* r) {
    return c ? waited(MPI_Ialltoall_c(s, 1, t, r, 1, t, f.comm, &q), q)
             : PMPI_Alltoall(s, 1, t, r, 1, t, f.comm);
  });
  expect_like_the_mpi("Bcast", 0, 1, [&](bool c, const int* s, int* r) {
    if (f.rank == 0) std::copy(s, s + 2 * kInts, r);
    return c ? MPI_Bcast_c(r, 1, t, 0, f.comm) : PMPI_Bcast(r, 1, t, 0, f.comm);
  });
  expect_like_the_mpi("Ibcast", 0, 1, [&](bool c, const int* s, int* r) {
    if (f.rank == 0) std::copy(s, s + 2 * kInts, r);
    return c ? waited(MPI_Ibcast_c(r, 1, t, 0, f.comm, &q), q) : PMPI_Bcast(r, 1, t, 0, f.comm);
  });
  expect_like_the_mpi("Gather", 1, n, [&](bool c, const int* s, int* r) {
    return c ? MPI_Gather_c(s, 1, t, r, 1, t, 0, f.comm) : PMPI_Gather(s, 1, t, r, 1, t, 0, f.comm);
  });
  expect_like_the_mpi("Igather", 1, n, [&](bool c, const int* s, int* r) {
    return c ? waited(MPI_Igather_c(s, 1, t, r, 1, t, 0, f.comm, &q), q)
             : PMPI_Gather(s, 1, t, r, 1, t, 0, f.comm);
  });
  expect_like_the_mpi("Scatter", n, 1, [&](bool c, const int* s, int* r) {
    return c ? MPI_Scatter_c(s, 1, t, r, 1, t, 0, f.comm)
             : PMPI_Scatter(s, 1, t, r, 1, t, 0, f.comm);
  });
  expect_like_the_mpi("Iscatter", n, 1, [&](bool c, const int* s, int* r) {
    return c ? waited(MPI_Iscatter_c(s, 1, t, r, 1, t, 0, f.comm, &q), q)
             : PMPI_Scatter(s, 1, t, r, 1, t, 0, f.comm);
  });
  // Reductions: MPICH defines MPI_SUM on predefined types only.
  const MPI_Op sum = MPI_SUM;
  const MPI_Datatype b = MPI_INT;
  expect_like_the_mpi("Reduce", 1, 1, [&](bool c, const int* s, int* r) {
    return c ? MPI_Reduce_c(s, r, 2 * kInts, b, sum, 0, f.comm)
             : PMPI_Reduce(s, r, 2 * kInts, b, sum, 0, f.comm);
  });
  expect_like_the_mpi("Ireduce", 1, 1, [&](bool c, const int* s, int* r) {
    return c ? waited(MPI_Ireduce_c(s, r, 2 * kInts, b, sum, 0, f.comm, &q), q)
             : PMPI_Reduce(s, r, 2 * kInts, b, sum, 0, f.comm);
  });
  expect_like_the_mpi("Allreduce", 1, 1, [&](bool c, const int* s, int* r) {
    return c ? MPI_Allreduce_c(s, r, 2 * kInts, b, sum, f.comm)
             : PMPI_Allreduce(s, r, 2 * kInts, b, sum, f.comm);
  });
  expect_like_the_mpi("Iallreduce", 1, 1, [&](bool c, const int* s, int* r) {
    return c ? waited(MPI_Iallreduce_c(s, r, 2 * kInts, b, sum, f.comm, &q), q)
             : PMPI_Allreduce(s, r, 2 * kInts, b, sum, f.comm);
  });
  expect_like_the_mpi("Reduce_scatter_block", n, 1, [&](bool c, const int* s, int* r) {
    return c ? MPI_Reduce_scatter_block_c(s, r, 2 * kInts, b, sum, f.comm)
             : PMPI_Reduce_scatter_block(s, r, 2 * kInts, b, sum, f.comm);
  });
  expect_like_the_mpi("Ireduce_scatter_block", n, 1, [&](bool c, const int* s, int* r) {
    return c ? waited(MPI_Ireduce_scatter_block_c(s, r, 2 * kInts, b, sum, f.comm, &q), q)
             : PMPI_Reduce_scatter_block(s, r, 2 * kInts, b, sum, f.comm);
  });
  expect_like_the_mpi("Scan", 1, 1, [&](bool c, const int* s, int* r) {
    return c ? MPI_Scan_c(s, r, 2 * kInts, b, sum, f.comm)
             : PMPI_Scan(s, r, 2 * kInts, b, sum, f.comm);
  });
  expect_like_the_mpi("Iscan", 1, 1, [&](bool c, const int* s, int* r) {
    return c ? waited(MPI_Iscan_c(s, r, 2 * kInts, b, sum, f.comm, &q), q)
             : PMPI_Scan(s, r, 2 * kInts, b, sum, f.comm);
  });
  expect_like_the_mpi("Exscan", 1, 1, [&](bool c, const int* s, int* r) {
    return c ? MPI_Exscan_c(s, r, 2 * kInts, b, sum, f.comm)
             : PMPI_Exscan(s, r, 2 * kInts, b, sum, f.comm);
  });
  expect_like_the_mpi("Iexscan", 1, 1, [&](bool c, const int* s, int* r) {
    return c ? waited(MPI_Iexscan_c(s, r, 2 * kInts, b, sum, f.comm, &q), q)
             : PMPI_Exscan(s, r, 2 * kInts, b, sum, f.comm);
  });
  expect_like_the_mpi("Neighbor_allgather", 1, 2, [&](bool c, const int* s, int* r) {
    return c ? MPI_Neighbor_allgather_c(s, 1, t, r, 1, t, f.cart)
             : PMPI_Neighbor_allgather(s, 1, t, r, 1, t, f.cart);
  });
  expect_like_the_mpi("Ineighbor_allgather", 1, 2, [&](bool c, const int* s, int* r) {
    return c ? waited(MPI_Ineighbor_allgather_c(s, 1, t, r, 1, t, f.cart, &q), q)
             : PMPI_Neighbor_allgather(s, 1, t, r, 1, t, f.cart);
  });
  expect_like_the_mpi("Neighbor_alltoall", 2, 2, [&](bool c, const int* s, int* r) {
    return c ? MPI_Neighbor_alltoall_c(s, 1, t, r, 1, t, f.cart)
             : PMPI_Neighbor_alltoall(s, 1, t, r, 1, t, f.cart);
  });
  expect_like_the_mpi("Ineighbor_alltoall", 2, 2, [&](bool c, const int* s, int* r) {
    return c ? waited(MPI_Ineighbor_alltoall_c(s, 1, t, r, 1, t, f.cart, &q), q)
             : PMPI_Neighbor_alltoall(s, 1, t, r, 1, t, f.cart);
  });
}

TEST(LargeCount, ScalarCountPersistentCalls) {
  if (on_open_mpi()) GTEST_SKIP() << "Open MPI 4.1 has no _c calls";
  const Fixture f;
  const MPI_Datatype t = f.strided;
  const int n = f.size;
  const MPI_Info i = MPI_INFO_NULL;
  const bool old = mpich_before_4_3();
  MPI_Request q = MPI_REQUEST_NULL;
  expect_like_the_mpi("Allgather_init", 1, n, [&](bool c, const int* s, int* r) {
    return c ? started(MPI_Allgather_init_c(s, 1, t, r, 1, t, f.comm, i, &q), q)
             : PMPI_Allgather(s, 1, t, r, 1, t, f.comm);
  });
  expect_like_the_mpi("Alltoall_init", n, n, [&](bool c, const int* s, int* r) {
    return c ? started(MPI_Alltoall_init_c(s, 1, t, r, 1, t, f.comm, i, &q), q)
             : PMPI_Alltoall(s, 1, t, r, 1, t, f.comm);
  });
  expect_like_the_mpi("Bcast_init", 0, 1, [&](bool c, const int* s, int* r) {
    if (f.rank == 0) std::copy(s, s + 2 * kInts, r);
    return c ? started(MPI_Bcast_init_c(r, 1, t, 0, f.comm, i, &q), q)
             : PMPI_Bcast(r, 1, t, 0, f.comm);
  });
  expect_like_the_mpi(
      "Gather_init", 1, n,
      [&](bool c, const int* s, int* r) {
        return c ? started(MPI_Gather_init_c(s, 1, t, r, 1, t, 0, f.comm, i, &q), q)
                 : PMPI_Gather(s, 1, t, r, 1, t, 0, f.comm);
      },
      old);
  expect_like_the_mpi(
      "Scatter_init", n, 1,
      [&](bool c, const int* s, int* r) {
        return c ? started(MPI_Scatter_init_c(s, 1, t, r, 1, t, 0, f.comm, i, &q), q, old ? 1 : 2)
                 : PMPI_Scatter(s, 1, t, r, 1, t, 0, f.comm);
      },
      old);
  const MPI_Op sum = MPI_SUM;
  const MPI_Datatype b = MPI_INT;
  expect_like_the_mpi("Reduce_init", 1, 1, [&](bool c, const int* s, int* r) {
    return c ? started(MPI_Reduce_init_c(s, r, 2 * kInts, b, sum, 0, f.comm, i, &q), q)
             : PMPI_Reduce(s, r, 2 * kInts, b, sum, 0, f.comm);
  });
  expect_like_the_mpi("Allreduce_init", 1, 1, [&](bool c, const int* s, int* r) {
    return c ? started(MPI_Allreduce_init_c(s, r, 2 * kInts, b, sum, f.comm, i, &q), q)
             : PMPI_Allreduce(s, r, 2 * kInts, b, sum, f.comm);
  });
  expect_like_the_mpi("Reduce_scatter_block_init", n, 1, [&](bool c, const int* s, int* r) {
    return c ? started(MPI_Reduce_scatter_block_init_c(s, r, 2 * kInts, b, sum, f.comm, i, &q), q)
             : PMPI_Reduce_scatter_block(s, r, 2 * kInts, b, sum, f.comm);
  });
  expect_like_the_mpi("Scan_init", 1, 1, [&](bool c, const int* s, int* r) {
    return c ? started(MPI_Scan_init_c(s, r, 2 * kInts, b, sum, f.comm, i, &q), q)
             : PMPI_Scan(s, r, 2 * kInts, b, sum, f.comm);
  });
  expect_like_the_mpi("Exscan_init", 1, 1, [&](bool c, const int* s, int* r) {
    return c ? started(MPI_Exscan_init_c(s, r, 2 * kInts, b, sum, f.comm, i, &q), q)
             : PMPI_Exscan(s, r, 2 * kInts, b, sum, f.comm);
  });
  expect_like_the_mpi("Neighbor_allgather_init", 1, 2, [&](bool c, const int* s, int* r) {
    return c ? started(MPI_Neighbor_allgather_init_c(s, 1, t, r, 1, t, f.cart, i, &q), q)
             : PMPI_Neighbor_allgather(s, 1, t, r, 1, t, f.cart);
  });
  expect_like_the_mpi("Neighbor_alltoall_init", 2, 2, [&](bool c, const int* s, int* r) {
    return c ? started(MPI_Neighbor_alltoall_init_c(s, 1, t, r, 1, t, f.cart, i, &q), q)
             : PMPI_Neighbor_alltoall(s, 1, t, r, 1, t, f.cart);
  });
}

// The count-array forms, each blocking, nonblocking and persistent (`form` 0, 1, 2).
class CountArrays : public ::testing::TestWithParam<int> {
 protected:
  // The `_c` call in this form: `blocking()`, `nonblocking(&q)` or `persistent(info, &q)`.
  template <class B, class N, class P>
  int call(B blocking, N nonblocking, P persistent) {
    MPI_Request q = MPI_REQUEST_NULL;
    switch (GetParam()) {
      case 0:
        return blocking();
      case 1:
        return waited(nonblocking(&q), q);
      default:
        return started(persistent(MPI_INFO_NULL, &q), q);
    }
  }
  static std::string form() {
    const char* names[] = {"", "nonblocking ", "persistent "};
    return names[GetParam()];
  }
};

TEST_P(CountArrays, AsTheMpisClassicCalls) {
  if (on_open_mpi()) GTEST_SKIP() << "Open MPI 4.1 has no _c calls";
  const Fixture f;
  const MPI_Datatype t = f.strided;
  const int n = f.size;
  MPI_Aint lb = 0, span = 0;
  MPI_Type_get_extent(t, &lb, &span);
  // One block per peer, in reverse order (so that the displacements matter); displacements in
  // elements (v forms) or bytes (w forms).
  std::vector<MPI_Count> counts(n, 1), two(2, 1);
  std::vector<int> icounts(n, 1), itwo(2, 1), idispls(n), idispls2(2);
  std::vector<MPI_Aint> displs(n), bytes(n), displs2(2), bytes2(2);
  std::vector<MPI_Datatype> types(n, t), types2(2, t);
  for (int k = 0; k < n; ++k)
    idispls[k] = n - 1 - k, displs[k] = n - 1 - k, bytes[k] = displs[k] * span;
  for (int k = 0; k < 2; ++k)
    idispls2[k] = 1 - k, displs2[k] = 1 - k, bytes2[k] = displs2[k] * span;
  std::vector<int> ibytes(bytes.begin(), bytes.end());
  const std::string form = this->form();
  expect_like_the_mpi(form + "Allgatherv", 1, n, [&](bool c, const int* s, int* r) {
    if (!c) return PMPI_Allgatherv(s, 1, t, r, icounts.data(), idispls.data(), t, f.comm);
    return call(
        [&] { return MPI_Allgatherv_c(s, 1, t, r, counts.data(), displs.data(), t, f.comm); },
        [&](MPI_Request* q) {
          return MPI_Iallgatherv_c(s, 1, t, r, counts.data(), displs.data(), t, f.comm, q);
        },
        [&](MPI_Info i, MPI_Request* q) {
          return MPI_Allgatherv_init_c(s, 1, t, r, counts.data(), displs.data(), t, f.comm, i, q);
        });
  });
  expect_like_the_mpi(form + "Alltoallv", n, n, [&](bool c, const int* s, int* r) {
    if (!c) {
      return PMPI_Alltoallv(s, icounts.data(), idispls.data(), t, r, icounts.data(), idispls.data(),
                            t, f.comm);
    }
    return call(
        [&] {
          return MPI_Alltoallv_c(s, counts.data(), displs.data(), t, r, counts.data(),
                                 displs.data(), t, f.comm);
        },
        [&](MPI_Request* q) {
          return MPI_Ialltoallv_c(s, counts.data(), displs.data(), t, r, counts.data(),
                                  displs.data(), t, f.comm, q);
        },
        [&](MPI_Info i, MPI_Request* q) {
          return MPI_Alltoallv_init_c(s, counts.data(), displs.data(), t, r, counts.data(),
                                      displs.data(), t, f.comm, i, q);
        });
  });
  expect_like_the_mpi(form + "Alltoallw", n, n, [&](bool c, const int* s, int* r) {
    if (!c) {
      return PMPI_Alltoallw(s, icounts.data(), ibytes.data(), types.data(), r, icounts.data(),
                            ibytes.data(), types.data(), f.comm);
    }
    return call(
        [&] {
          return MPI_Alltoallw_c(s, counts.data(), bytes.data(), types.data(), r, counts.data(),
                                 bytes.data(), types.data(), f.comm);
        },
        [&](MPI_Request* q) {
          return MPI_Ialltoallw_c(s, counts.data(), bytes.data(), types.data(), r, counts.data(),
                                  bytes.data(), types.data(), f.comm, q);
        },
        [&](MPI_Info i, MPI_Request* q) {
          return MPI_Alltoallw_init_c(s, counts.data(), bytes.data(), types.data(), r,
                                      counts.data(), bytes.data(), types.data(), f.comm, i, q);
        });
  });
  // Rooted: the arrays are significant at the root only, and null elsewhere.
  const int root = n - 1;
  const bool at_root = f.rank == root;
  const MPI_Count* rooted_counts = at_root ? counts.data() : nullptr;
  const MPI_Aint* rooted_displs = at_root ? displs.data() : nullptr;
  expect_like_the_mpi(form + "Gatherv", 1, n, [&](bool c, const int* s, int* r) {
    if (!c) return PMPI_Gatherv(s, 1, t, r, icounts.data(), idispls.data(), t, root, f.comm);
    return call(
        [&] { return MPI_Gatherv_c(s, 1, t, r, rooted_counts, rooted_displs, t, root, f.comm); },
        [&](MPI_Request* q) {
          return MPI_Igatherv_c(s, 1, t, r, rooted_counts, rooted_displs, t, root, f.comm, q);
        },
        [&](MPI_Info i, MPI_Request* q) {
          return MPI_Gatherv_init_c(s, 1, t, r, rooted_counts, rooted_displs, t, root, f.comm, i,
                                    q);
        });
  });
  expect_like_the_mpi(form + "Scatterv", n, 1, [&](bool c, const int* s, int* r) {
    if (!c) return PMPI_Scatterv(s, icounts.data(), idispls.data(), t, r, 1, t, root, f.comm);
    return call(
        [&] { return MPI_Scatterv_c(s, rooted_counts, rooted_displs, t, r, 1, t, root, f.comm); },
        [&](MPI_Request* q) {
          return MPI_Iscatterv_c(s, rooted_counts, rooted_displs, t, r, 1, t, root, f.comm, q);
        },
        [&](MPI_Info i, MPI_Request* q) {
          return MPI_Scatterv_init_c(s, rooted_counts, rooted_displs, t, r, 1, t, root, f.comm, i,
                                     q);
        });
  });
  // Reduce_scatter: rank k gets k + 1 ints (MPICH defines MPI_SUM on predefined types only).
  std::vector<MPI_Count> grow(n);
  std::vector<int> igrow(n);
  int total = 0;
  for (int k = 0; k < n; ++k) grow[k] = igrow[k] = k + 1, total += k + 1;
  ASSERT_LE(total, 2 * kInts * n);
  expect_like_the_mpi(form + "Reduce_scatter", n, 1, [&](bool c, const int* s, int* r) {
    if (!c) return PMPI_Reduce_scatter(s, r, igrow.data(), MPI_INT, MPI_SUM, f.comm);
    return call([&] { return MPI_Reduce_scatter_c(s, r, grow.data(), MPI_INT, MPI_SUM, f.comm); },
                [&](MPI_Request* q) {
                  return MPI_Ireduce_scatter_c(s, r, grow.data(), MPI_INT, MPI_SUM, f.comm, q);
                },
                [&](MPI_Info i, MPI_Request* q) {
                  return MPI_Reduce_scatter_init_c(s, r, grow.data(), MPI_INT, MPI_SUM, f.comm, i,
                                                   q);
                });
  });
  expect_like_the_mpi(form + "Neighbor_allgatherv", 1, 2, [&](bool c, const int* s, int* r) {
    if (!c) return PMPI_Neighbor_allgatherv(s, 1, t, r, itwo.data(), idispls2.data(), t, f.cart);
    return call(
        [&] {
          return MPI_Neighbor_allgatherv_c(s, 1, t, r, two.data(), displs2.data(), t, f.cart);
        },
        [&](MPI_Request* q) {
          return MPI_Ineighbor_allgatherv_c(s, 1, t, r, two.data(), displs2.data(), t, f.cart, q);
        },
        [&](MPI_Info i, MPI_Request* q) {
          return MPI_Neighbor_allgatherv_init_c(s, 1, t, r, two.data(), displs2.data(), t, f.cart,
                                                i, q);
        });
  });
  expect_like_the_mpi(form + "Neighbor_alltoallv", 2, 2, [&](bool c, const int* s, int* r) {
    if (!c) {
      return PMPI_Neighbor_alltoallv(s, itwo.data(), idispls2.data(), t, r, itwo.data(),
                                     idispls2.data(), t, f.cart);
    }
    return call(
        [&] {
          return MPI_Neighbor_alltoallv_c(s, two.data(), displs2.data(), t, r, two.data(),
                                          displs2.data(), t, f.cart);
        },
        [&](MPI_Request* q) {
          return MPI_Ineighbor_alltoallv_c(s, two.data(), displs2.data(), t, r, two.data(),
                                           displs2.data(), t, f.cart, q);
        },
        [&](MPI_Info i, MPI_Request* q) {
          return MPI_Neighbor_alltoallv_init_c(s, two.data(), displs2.data(), t, r, two.data(),
                                               displs2.data(), t, f.cart, i, q);
        });
  });
  expect_like_the_mpi(form + "Neighbor_alltoallw", 2, 2, [&](bool c, const int* s, int* r) {
    if (!c) {
      return PMPI_Neighbor_alltoallw(s, itwo.data(), bytes2.data(), types2.data(), r, itwo.data(),
                                     bytes2.data(), types2.data(), f.cart);
    }
    return call(
        [&] {
          return MPI_Neighbor_alltoallw_c(s, two.data(), bytes2.data(), types2.data(), r,
                                          two.data(), bytes2.data(), types2.data(), f.cart);
        },
        [&](MPI_Request* q) {
          return MPI_Ineighbor_alltoallw_c(s, two.data(), bytes2.data(), types2.data(), r,
                                           two.data(), bytes2.data(), types2.data(), f.cart, q);
        },
        [&](MPI_Info i, MPI_Request* q) {
          return MPI_Neighbor_alltoallw_init_c(s, two.data(), bytes2.data(), types2.data(), r,
                                               two.data(), bytes2.data(), types2.data(), f.cart, i,
                                               q);
        });
  });
}

INSTANTIATE_TEST_SUITE_P(Forms, CountArrays, ::testing::Values(0, 1, 2));

// A value that does not fit an int on some ranks only (here 3e9, a displacement of a zero count,
// or a count the call does not read there): those ranks forward to the MPI's `_c` call while the
// others may be served, and the blocking calls' same-node step, which every rank takes, must not
// hang. On a fresh communicator too, whose first call asks the ranks whether they share a node.
TEST(LargeCount, ValuesThatFitOnSomeRanksOnly) {
  if (on_open_mpi()) GTEST_SKIP() << "Open MPI 4.1 has no _c calls";
  const Fixture f;
  const MPI_Datatype t = f.strided;
  const int n = f.size;
  constexpr MPI_Aint kFar = 3000000000;
  for (const bool fresh : {true, false}) {
    SCOPED_TRACE(fresh ? "fresh communicator" : "used communicator");
    // Split, not duplicated: a duplicate inherits what Strider learned of the original.
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_split(f.comm, 0, f.rank, &comm);
    if (!fresh) {
      std::vector<int> s(2 * kInts, 1), r(2 * kInts * f.size);
      MPI_Allgather(s.data(), 1, t, r.data(), 1, t, comm);  // asks once, as the call below would
    }
    const int root = n - 1;
    // Every rank gives one block but the first, which gives none: at the root its displacement
    // is far.
    std::vector<MPI_Count> counts(n, 1);
    std::vector<int> icounts(n, 1), idispls(n);
    std::vector<MPI_Aint> displs(n);
    counts[0] = icounts[0] = 0;
    for (int k = 0; k < n; ++k) idispls[k] = displs[k] = k;
    displs[0] = kFar;
    const int mine = f.rank == 0 ? 0 : 1;
    expect_like_the_mpi(
        "Gatherv", 1, n,
        [&](bool c, const int* s, int* r) {
          return c ? MPI_Gatherv_c(s, mine, t, r, counts.data(), displs.data(), t, root, comm)
                   : PMPI_Gatherv(s, mine, t, r, icounts.data(), idispls.data(), t, root, comm);
        },
        true);
    expect_like_the_mpi(
        "Scatterv", n, 1,
        [&](bool c, const int* s, int* r) {
          return c ? MPI_Scatterv_c(s, counts.data(), displs.data(), t, r, mine, t, root, comm)
                   : PMPI_Scatterv(s, icounts.data(), idispls.data(), t, r, mine, t, root, comm);
        },
        true);
    // Alltoallv: nothing from the last rank to rank 0, whose displacement for it is far.
    std::vector<MPI_Count> sc(n, 1), rc(n, 1);
    std::vector<int> isc(n, 1), irc(n, 1), id(n);
    std::vector<MPI_Aint> sd(n), rd(n);
    for (int k = 0; k < n; ++k) id[k] = sd[k] = rd[k] = k;
    if (f.rank == n - 1) sc[0] = isc[0] = 0;
    if (f.rank == 0) rc[n - 1] = irc[n - 1] = 0, rd[n - 1] = kFar;
    expect_like_the_mpi(
        "Alltoallv", n, n,
        [&](bool c, const int* s, int* r) {
          return c ? MPI_Alltoallv_c(s, sc.data(), sd.data(), t, r, rc.data(), rd.data(), t, comm)
                   : PMPI_Alltoallv(s, isc.data(), id.data(), t, r, irc.data(), id.data(), t, comm);
        },
        true);
    // Gather: a count the call does not read off the root, far on one rank.
    const MPI_Count unread = f.rank == 0 && root != 0 ? kFar : 1;
    expect_like_the_mpi(
        "Gather", 1, n,
        [&](bool c, const int* s, int* r) {
          return c ? MPI_Gather_c(s, 1, t, r, unread, t, root, comm)
                   : PMPI_Gather(s, 1, t, r, 1, t, root, comm);
        },
        true);
    MPI_Comm_free(&comm);
  }
}

}  // namespace
}  // namespace strider::testing
