// A call on a freed communicator handle is the application's error, which the MPI reports once
// through an error handler. With Strider preloaded and the calls on its packed path
// (STRIDER_P2P_HOST=pack, STRIDER_COLL_HOST=pack), each call must reach the handler as often as
// the MPI's own P-call on the same arguments (the oracle) and return the same error class:
// Strider's own query of the communicator (its size, rank or kind) once called the handler
// before the MPI's call it then forwarded called it again, and MPI_Pack and MPI_Unpack, which
// Strider serves without the communicator, accepted it. MPICH only, where it checks handles: Open
// MPI 4.1 reads a freed communicator's memory, and so does an MPICH built without error checks
// (the MPICH 5.0.2 wheel): no error to compare.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "call_arguments.hpp"
#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

int handler_calls = 0;
void count_call(MPI_Comm*, int*, ...) { ++handler_calls; }

// `fn` on a freed communicator (`stale` in ARGS, made by `freed_by`) through Strider, and the
// MPI's own P`fn` on the same arguments as the oracle.
#define EXPECT_ON_AS_MPI(freed_by, fn, ...)                 \
  expect_as_mpi(                                            \
      #fn, [&](MPI_Comm stale) { return fn(__VA_ARGS__); }, \
      [&](MPI_Comm stale) { return P##fn(__VA_ARGS__); }, [&] { return freed_by(); })
#define EXPECT_AS_MPI(fn, ...) EXPECT_ON_AS_MPI(freed, fn, __VA_ARGS__)

class FreedComm : public ::testing::Test, protected CallArguments {
 protected:
  void SetUp() override {
    if (!on_mpich()) GTEST_SKIP() << "Open MPI reads a freed communicator's memory";
    MPI_Comm_create_errhandler(count_call, &counting_);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, counting_);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, counting_);
    int size = 0;
    if (PMPI_Comm_size(freed(), &size) == MPI_SUCCESS) {
      GTEST_SKIP() << "this MPI does not check communicator handles (built without error checks)";
    }
    make_arguments();
  }
  void TearDown() override {
    if (counting_ == MPI_ERRHANDLER_NULL) return;
    free_arguments();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&counting_);
  }
  // A duplicate of the world, given the counting handler and freed: its handle as it was.
  MPI_Comm freed() {
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    return stale(comm);
  }
  // The same for a periodic ring (a Cartesian topology: the neighbourhood collectives').
  MPI_Comm freed_ring() {
    MPI_Comm comm = MPI_COMM_NULL;
    const int periodic = 1;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &size_, &periodic, 0, &comm);
    return stale(comm);
  }
  MPI_Comm stale(MPI_Comm comm) {
    MPI_Comm_set_errhandler(comm, counting_);
    const MPI_Comm handle = comm;
    MPI_Comm_free(&comm);
    return handle;
  }
  // `call` through Strider, then `oracle` through the MPI, each on a communicator `make` freed:
  // both fail alike and reach the handler as often.
  void expect_as_mpi(const char* name, const std::function<int(MPI_Comm)>& call,
                     const std::function<int(MPI_Comm)>& oracle,
                     const std::function<MPI_Comm()>& make) {
    handler_calls = 0;
    const int got = call(make());
    const int got_calls = handler_calls;
    handler_calls = 0;
    const int want = oracle(make());
    const int want_calls = handler_calls;
    EXPECT_NE(want, MPI_SUCCESS) << name << ": the MPI accepted a freed communicator";
    EXPECT_EQ(error_class(got), error_class(want)) << name;
    EXPECT_EQ(got_calls, want_calls) << name << ": the error handler's calls";
  }

  MPI_Errhandler counting_ = MPI_ERRHANDLER_NULL;
};

TEST_F(FreedComm, PointToPointCalls) {
  int* s = send_.data();
  int* r = recv_.data();
  MPI_Status st;
  MPI_Request q = MPI_REQUEST_NULL;
  EXPECT_AS_MPI(MPI_Send, s, 1, vec_, peer_, 0, stale);
  EXPECT_AS_MPI(MPI_Ssend, s, 1, vec_, peer_, 0, stale);
  EXPECT_AS_MPI(MPI_Rsend, s, 1, vec_, peer_, 0, stale);
  EXPECT_AS_MPI(MPI_Recv, r, 1, vec_, peer_, 0, stale, &st);
  EXPECT_AS_MPI(MPI_Sendrecv, s, 1, vec_, peer_, 0, r, 1, vec_, peer_, 0, stale, &st);
  EXPECT_AS_MPI(MPI_Isend, s, 1, vec_, peer_, 0, stale, &q);
  EXPECT_AS_MPI(MPI_Irecv, r, 1, vec_, peer_, 0, stale, &q);
  EXPECT_AS_MPI(MPI_Send_init, s, 1, vec_, peer_, 0, stale, &q);
  EXPECT_AS_MPI(MPI_Recv_init, r, 1, vec_, peer_, 0, stale, &q);
}

TEST_F(FreedComm, Collectives) {
  int* s = send_.data();
  int* r = recv_.data();
  const int* c = counts_.data();
  const int* d = displs_.data();
  const MPI_Datatype* t = types_.data();
  int x = 1, y = 0;
  MPI_Request q = MPI_REQUEST_NULL;
  EXPECT_AS_MPI(MPI_Bcast, s, 1, vec_, 0, stale);
  EXPECT_AS_MPI(MPI_Gather, s, 1, vec_, r, 1, vec_, 0, stale);
  EXPECT_AS_MPI(MPI_Scatter, s, 1, vec_, r, 1, vec_, 0, stale);
  EXPECT_AS_MPI(MPI_Allgather, s, 1, vec_, r, 1, vec_, stale);
  EXPECT_AS_MPI(MPI_Alltoall, s, 1, vec_, r, 1, vec_, stale);
  const int* bd = byte_displs_.data();
  EXPECT_AS_MPI(MPI_Alltoallw, s, c, bd, t, r, c, bd, t, stale);
  EXPECT_AS_MPI(MPI_Allreduce, &x, &y, 1, MPI_INT, MPI_SUM, stale);
  EXPECT_AS_MPI(MPI_Reduce, &x, &y, 1, MPI_INT, MPI_SUM, 0, stale);
  EXPECT_AS_MPI(MPI_Scan, &x, &y, 1, MPI_INT, MPI_SUM, stale);
  EXPECT_AS_MPI(MPI_Reduce_scatter_block, &x, &y, 1, MPI_INT, MPI_SUM, stale);
  EXPECT_AS_MPI(MPI_Ibcast, s, 1, vec_, 0, stale, &q);
  EXPECT_AS_MPI(MPI_Iallreduce, &x, &y, 1, MPI_INT, MPI_SUM, stale, &q);
}

TEST_F(FreedComm, CollectivesWithArrays) {
  int* s = send_.data();
  int* r = recv_.data();
  const int* c = counts_.data();
  const int* d = displs_.data();
  int x = 1, y = 0;
  EXPECT_AS_MPI(MPI_Allgatherv, s, 1, vec_, r, c, d, MPI_INT, stale);
  EXPECT_AS_MPI(MPI_Alltoallv, s, c, d, vec_, r, c, d, vec_, stale);
  EXPECT_AS_MPI(MPI_Gatherv, s, 1, vec_, r, c, d, vec_, 0, stale);
  EXPECT_AS_MPI(MPI_Scatterv, s, c, d, vec_, r, 1, vec_, 0, stale);
  EXPECT_AS_MPI(MPI_Reduce_scatter, &x, &y, c, MPI_INT, MPI_SUM, stale);
  EXPECT_AS_MPI(MPI_Exscan, &x, &y, 1, MPI_INT, MPI_SUM, stale);
}

TEST_F(FreedComm, NeighbourhoodCollectives) {
  int* s = send_.data();
  int* r = recv_.data();
  const std::vector<int> c(2, 1), d{0, 12};
  const std::vector<MPI_Aint> bytes{0, 48};
  const std::vector<MPI_Datatype> t(2, vec_);
  EXPECT_ON_AS_MPI(freed_ring, MPI_Neighbor_allgather, s, 1, vec_, r, 1, vec_, stale);
  EXPECT_ON_AS_MPI(freed_ring, MPI_Neighbor_alltoall, s, 1, vec_, r, 1, vec_, stale);
  EXPECT_ON_AS_MPI(freed_ring, MPI_Neighbor_alltoallv, s, c.data(), d.data(), vec_, r, c.data(),
                   d.data(), vec_, stale);
  EXPECT_ON_AS_MPI(freed_ring, MPI_Neighbor_alltoallw, s, c.data(), bytes.data(), t.data(), r,
                   c.data(), bytes.data(), t.data(), stale);
}

#if MPI_VERSION >= 4
// MPI-4's large-count forms, served through the classic ones (calls/large_count.hpp).
TEST_F(FreedComm, LargeCountCollectives) {
  int* s = send_.data();
  int* r = recv_.data();
  const std::vector<MPI_Count> c(counts_.begin(), counts_.end()), ring_c(2, 1);
  const std::vector<MPI_Aint> d(displs_.begin(), displs_.end()), ring_d{0, 12};
  EXPECT_AS_MPI(MPI_Allgatherv_c, s, 1, vec_, r, c.data(), d.data(), MPI_INT, stale);
  EXPECT_AS_MPI(MPI_Alltoallv_c, s, c.data(), d.data(), vec_, r, c.data(), d.data(), vec_, stale);
  EXPECT_AS_MPI(MPI_Gatherv_c, s, 1, vec_, r, c.data(), d.data(), vec_, 0, stale);
  EXPECT_AS_MPI(MPI_Reduce_scatter_c, s, r, c.data(), MPI_INT, MPI_SUM, stale);
  EXPECT_ON_AS_MPI(freed_ring, MPI_Neighbor_alltoallv_c, s, ring_c.data(), ring_d.data(), vec_, r,
                   ring_c.data(), ring_d.data(), vec_, stale);
}
#endif

TEST_F(FreedComm, PackAndUnpack) {
  std::vector<char> packed(256);
  int position = 0;
  EXPECT_AS_MPI(MPI_Pack, send_.data(), 1, vec_, packed.data(), 256, &position, stale);
  position = 0;
  EXPECT_AS_MPI(MPI_Unpack, packed.data(), 256, &position, recv_.data(), 1, vec_, stale);
}

}  // namespace
}  // namespace strider::testing
