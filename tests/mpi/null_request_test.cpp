// A nonblocking or persistent call made without a request handle (a null MPI_Request*) is the
// application's error. With Strider preloaded and the calls on its packed path
// (STRIDER_P2P_HOST=pack, STRIDER_COLL_HOST=pack), each must return the error class the MPI
// itself returns for the same call (PMPI_, the oracle), under MPI_ERRORS_RETURN: Strider once
// stored a request through the null pointer (a crash) or took the call for its blocking form.
// Open MPI 4.1 checks the point-to-point calls only (its nonblocking collectives crash on a null
// request without Strider too), so the collectives run where the MPI is MPICH.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "call_arguments.hpp"
#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

// `fn` with a null request through Strider, and the MPI's own P`fn` on the same arguments (ARGS,
// those before the request) as the oracle.
#define EXPECT_AS_MPI(fn, ...)                                   \
  expect_as_mpi(                                                 \
      #fn, [&](MPI_Request* q_) { return fn(__VA_ARGS__, q_); }, \
      [&](MPI_Request* q_) { return P##fn(__VA_ARGS__, q_); })

class NullRequest : public ::testing::Test, protected CallArguments {
 protected:
  void SetUp() override {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    make_arguments();
  }
  void TearDown() override {
    free_arguments();
    MPI_Comm_free(&comm_);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  }
  // `call(nullptr)` through Strider, then `oracle(nullptr)` through the MPI: both fail, alike.
  void expect_as_mpi(const char* name, const std::function<int(MPI_Request*)>& call,
                     const std::function<int(MPI_Request*)>& oracle) {
    const strider_stats before = stats();
    const int got = call(nullptr);
    const int want = oracle(nullptr);
    EXPECT_NE(want, MPI_SUCCESS) << name << ": the MPI accepted a null request";
    EXPECT_EQ(error_class(got), error_class(want)) << name;
    // Nothing was sent or posted: the next exchange on the communicator still matches.
    const strider_stats after = stats();
    EXPECT_EQ(after.sends_packed, before.sends_packed) << name;
    EXPECT_EQ(after.sends_deferred, before.sends_deferred) << name;
    EXPECT_EQ(after.collectives_served, before.collectives_served) << name;
  }
  // One message each way, to show that the refused calls left no stray message or receive.
  void exchange_still_matches() {
    std::vector<int> out(12, world_rank() + 7), in(12, -1);
    const int from = (world_rank() + size_ - 1) % size_;
    ASSERT_EQ(MPI_Sendrecv(out.data(), 1, vec_, peer_, 5, in.data(), 1, vec_, from, 5, comm_,
                           MPI_STATUS_IGNORE),
              MPI_SUCCESS);
    EXPECT_EQ(in[0], from + 7);
    EXPECT_EQ(in[2], -1);  // the gap
    EXPECT_EQ(in[4], from + 7);
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
};

TEST_F(NullRequest, PointToPoint) {
  int* s = send_.data();
  int* r = recv_.data();
  const int p = peer_;
  EXPECT_AS_MPI(MPI_Isend, s, 1, vec_, p, 1, comm_);
  EXPECT_AS_MPI(MPI_Issend, s, 1, vec_, p, 1, comm_);
  EXPECT_AS_MPI(MPI_Irsend, s, 1, vec_, p, 1, comm_);
  EXPECT_AS_MPI(MPI_Ibsend, s, 1, vec_, p, 1, comm_);
  EXPECT_AS_MPI(MPI_Irecv, r, 1, vec_, p, 1, comm_);
  EXPECT_AS_MPI(MPI_Send_init, s, 1, vec_, p, 1, comm_);
  EXPECT_AS_MPI(MPI_Ssend_init, s, 1, vec_, p, 1, comm_);
  EXPECT_AS_MPI(MPI_Recv_init, r, 1, vec_, p, 1, comm_);
#if STRIDER_HAVE_MPI4_P2P
  EXPECT_AS_MPI(MPI_Isend_c, s, 1, vec_, p, 1, comm_);
  EXPECT_AS_MPI(MPI_Irecv_c, r, 1, vec_, p, 1, comm_);
#endif
  exchange_still_matches();
}

TEST_F(NullRequest, Collectives) {
  if (!on_mpich()) GTEST_SKIP() << "this MPI crashes on a null collective request itself";
  int* s = send_.data();
  int* r = recv_.data();
  const int* c = counts_.data();
  const int* d = displs_.data();
  const int* bd = byte_displs_.data();
  const MPI_Datatype* t = types_.data();
  const MPI_Datatype v = vec_;
  MPI_Comm cm = comm_;
  EXPECT_AS_MPI(MPI_Ibcast, s, 1, v, 0, cm);
  EXPECT_AS_MPI(MPI_Igather, s, 1, v, r, 1, v, 0, cm);
  EXPECT_AS_MPI(MPI_Igatherv, s, 1, v, r, c, d, v, 0, cm);
  EXPECT_AS_MPI(MPI_Iscatter, s, 1, v, r, 1, v, 0, cm);
  EXPECT_AS_MPI(MPI_Iscatterv, s, c, d, v, r, 1, v, 0, cm);
  EXPECT_AS_MPI(MPI_Iallgather, s, 1, v, r, 1, v, cm);
  EXPECT_AS_MPI(MPI_Iallgatherv, s, 1, v, r, c, d, v, cm);
  EXPECT_AS_MPI(MPI_Ialltoall, s, 1, v, r, 1, v, cm);
  EXPECT_AS_MPI(MPI_Ialltoallv, s, c, d, v, r, c, d, v, cm);
  EXPECT_AS_MPI(MPI_Ialltoallw, s, c, bd, t, r, c, bd, t, cm);
  EXPECT_AS_MPI(MPI_Iallreduce, s, r, 1, v, MPI_SUM, cm);
  EXPECT_AS_MPI(MPI_Ireduce, s, r, 1, v, MPI_SUM, 0, cm);
  EXPECT_AS_MPI(MPI_Iscan, s, r, 1, v, MPI_SUM, cm);
  EXPECT_AS_MPI(MPI_Ireduce_scatter_block, s, r, 1, v, MPI_SUM, cm);
#if STRIDER_HAVE_MPI4_PERSISTENT_COLL
  EXPECT_AS_MPI(MPI_Bcast_init, s, 1, v, 0, cm, MPI_INFO_NULL);
  EXPECT_AS_MPI(MPI_Alltoallw_init, s, c, bd, t, r, c, bd, t, cm, MPI_INFO_NULL);
#endif
  // Neighbourhood collectives on a ring.
  MPI_Comm ring = MPI_COMM_NULL;
  const int dims[1] = {size_}, periods[1] = {1};
  ASSERT_EQ(MPI_Cart_create(comm_, 1, dims, periods, 0, &ring), MPI_SUCCESS);
  MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
  EXPECT_AS_MPI(MPI_Ineighbor_alltoall, s, 1, v, r, 1, v, ring);
  const MPI_Aint adispls[2] = {0, 48};
  const int two[2] = {1, 1};
  const MPI_Datatype types2[2] = {v, v};
  EXPECT_AS_MPI(MPI_Ineighbor_alltoallw, s, two, adispls, types2, r, two, adispls, types2, ring);
  MPI_Comm_free(&ring);
  exchange_still_matches();
}

}  // namespace
}  // namespace strider::testing
