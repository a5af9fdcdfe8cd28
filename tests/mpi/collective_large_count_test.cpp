// MPI-4's large-count collectives (`_c`), where the MPI has them (MPICH 4): mpi4py calls them
// wherever they exist, so its collectives on GPU buffers reach Strider only through these. Each
// call, with STRIDER_COLL_HOST=pack, must take Strider's path (collectives_served grows) and
// leave the receive buffer as the MPI's classic call does on a copy (the oracle, PMPI_). A
// strided type of ints, random values, two or more ranks; the neighbourhood calls on a periodic
// 1D Cartesian communicator.
#include <gtest/gtest.h>

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
using Run = std::function<int(bool large, const int* send, int* recv)>;
void expect_like_the_mpi(const std::string& name, int send_blocks, int recv_blocks, Run run) {
  SCOPED_TRACE(name);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::mt19937 rng(static_cast<std::uint32_t>(name.size() * 131 + rank));
  std::vector<int> send(static_cast<std::size_t>(2 * kInts * std::max(send_blocks, 1)));
  for (int& v : send) v = static_cast<int>(rng() % 1000);
  std::vector<int> recv(static_cast<std::size_t>(2 * kInts * std::max(recv_blocks, 1)));
  for (int& v : recv) v = -static_cast<int>(rng() % 1000) - 1;
  std::vector<int> expected = recv;
  const std::uint64_t served = strider_loaded() ? stats().collectives_served : 0;
  ASSERT_EQ(run(true, send.data(), recv.data()), MPI_SUCCESS);
  if (strider_loaded()) EXPECT_EQ(stats().collectives_served, served + 1) << "not Strider's";
  ASSERT_EQ(run(false, send.data(), expected.data()), MPI_SUCCESS);
  EXPECT_EQ(recv, expected);
}

// A nonblocking call's request, waited for.
int waited(int rc, MPI_Request& request) {
  return rc != MPI_SUCCESS ? rc : MPI_Wait(&request, MPI_STATUS_IGNORE);
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

TEST(LargeCount, CountArrayCalls) {
  if (on_open_mpi()) GTEST_SKIP() << "Open MPI 4.1 has no _c calls";
  const Fixture f;
  const MPI_Datatype t = f.strided;
  const int n = f.size;
  int extent = 0;
  MPI_Type_size(t, &extent);
  MPI_Aint lb = 0, span = 0;
  MPI_Type_get_extent(t, &lb, &span);
  // One block per peer, in order; displacements in elements (v forms) or bytes (w forms).
  std::vector<MPI_Count> counts(n, 1), two(2, 1);
  std::vector<int> icounts(n, 1), itwo(2, 1), idispls(n), idispls2(2);
  std::vector<MPI_Aint> displs(n), bytes(n), displs2(2), bytes2(2);
  std::vector<MPI_Datatype> types(n, t), types2(2, t);
  for (int i = 0; i < n; ++i) idispls[i] = i, displs[i] = i, bytes[i] = i * span;
  for (int i = 0; i < 2; ++i) idispls2[i] = i, displs2[i] = i, bytes2[i] = i * span;
  std::vector<int> ibytes(bytes.begin(), bytes.end());
  expect_like_the_mpi("Allgatherv", 1, n, [&](bool c, const int* s, int* r) {
    return c ? MPI_Allgatherv_c(s, 1, t, r, counts.data(), displs.data(), t, f.comm)
             : PMPI_Allgatherv(s, 1, t, r, icounts.data(), idispls.data(), t, f.comm);
  });
  expect_like_the_mpi("Alltoallv", n, n, [&](bool c, const int* s, int* r) {
    return c ? MPI_Alltoallv_c(s, counts.data(), displs.data(), t, r, counts.data(), displs.data(),
                               t, f.comm)
             : PMPI_Alltoallv(s, icounts.data(), idispls.data(), t, r, icounts.data(),
                              idispls.data(), t, f.comm);
  });
  expect_like_the_mpi("Alltoallw", n, n, [&](bool c, const int* s, int* r) {
    return c ? MPI_Alltoallw_c(s, counts.data(), bytes.data(), types.data(), r, counts.data(),
                               bytes.data(), types.data(), f.comm)
             : PMPI_Alltoallw(s, icounts.data(), ibytes.data(), types.data(), r, icounts.data(),
                              ibytes.data(), types.data(), f.comm);
  });
  expect_like_the_mpi("Neighbor_allgatherv", 1, 2, [&](bool c, const int* s, int* r) {
    return c ? MPI_Neighbor_allgatherv_c(s, 1, t, r, two.data(), displs2.data(), t, f.cart)
             : PMPI_Neighbor_allgatherv(s, 1, t, r, itwo.data(), idispls2.data(), t, f.cart);
  });
  expect_like_the_mpi("Neighbor_alltoallv", 2, 2, [&](bool c, const int* s, int* r) {
    return c ? MPI_Neighbor_alltoallv_c(s, two.data(), displs2.data(), t, r, two.data(),
                                        displs2.data(), t, f.cart)
             : PMPI_Neighbor_alltoallv(s, itwo.data(), idispls2.data(), t, r, itwo.data(),
                                       idispls2.data(), t, f.cart);
  });
  expect_like_the_mpi("Neighbor_alltoallw", 2, 2, [&](bool c, const int* s, int* r) {
    return c ? MPI_Neighbor_alltoallw_c(s, two.data(), bytes2.data(), types2.data(), r, two.data(),
                                        bytes2.data(), types2.data(), f.cart)
             : PMPI_Neighbor_alltoallw(s, itwo.data(), bytes2.data(), types2.data(), r, itwo.data(),
                                       bytes2.data(), types2.data(), f.cart);
  });
  (void)extent;
}

}  // namespace
}  // namespace strider::testing
