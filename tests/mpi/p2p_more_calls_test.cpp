// Point-to-point calls p2p_test.cpp leaves out: MPI_Ibsend, MPI_Irsend, MPI_Request_get_status,
// and where the MPI has them (MPICH 4) the MPI-4 large-count calls (MPI_Send_c, ...). With
// STRIDER_P2P_HOST=pack they take Strider's packed path (counters checked), and the data matches
// PMPI_Pack of the sender's buffer. Two ranks, a strided and an irregular type.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

struct Types {
  MPI_Datatype vector = MPI_DATATYPE_NULL, indexed = MPI_DATATYPE_NULL;
  Types() {
    MPI_Type_vector(7, 3, 5, MPI_INT, &vector);
    MPI_Type_commit(&vector);
    const int lengths[] = {2, 1, 4}, displs[] = {9, 0, 4};
    MPI_Type_indexed(3, lengths, displs, MPI_INT, &indexed);
    MPI_Type_commit(&indexed);
  }
  ~Types() {
    MPI_Type_free(&vector);
    MPI_Type_free(&indexed);
  }
};

// Ints numbered by rank and index, so every element says where it came from.
std::vector<int> numbered(int rank, int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), rank * 100000);
  return v;
}

// The receiver's expected buffer: `before` with the sender's packed object unpacked into it.
std::vector<int> expected(MPI_Datatype type, int count, const std::vector<int>& sender,
                          std::vector<int> before) {
  int size = 0;
  PMPI_Pack_size(count, type, MPI_COMM_SELF, &size);
  std::vector<char> packed(size);
  int position = 0;
  PMPI_Pack(sender.data(), count, type, packed.data(), size, &position, MPI_COMM_SELF);
  int read = 0;
  PMPI_Unpack(packed.data(), position, &read, before.data(), count, type, MPI_COMM_SELF);
  return before;
}

// Checks the counters: every one of `calls` sends and receives took Strider's path, packed or
// (below MPI_THREAD_MULTIPLE) by a same-node offer.
void expect_packed(const strider_stats& before, int calls) {
  if (!strider_loaded()) return;
  const strider_stats after = stats();
  EXPECT_EQ(after.sends_packed - before.sends_packed + after.offers_taken - before.offers_taken,
            static_cast<std::uint64_t>(calls));
  EXPECT_EQ(after.recvs_packed - before.recvs_packed + after.offers_used - before.offers_used,
            static_cast<std::uint64_t>(calls));
  EXPECT_EQ(after.requests_pending, 0u);
}

TEST(MoreP2p, IbsendAndIrsend) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  Types types;
  const int me = world_rank(), peer = 1 - me;
  const strider_stats before = stats();
  for (MPI_Datatype type : {types.vector, types.indexed}) {
    const int count = 3, n = 200;
    const std::vector<int> mine = numbered(me, n), theirs = numbered(peer, n);
    const std::vector<int> blank(n, -1);
    const std::vector<int> want = expected(type, count, theirs, blank);
    std::vector<int> got = blank;
    std::vector<char> attached(1 << 16);
    MPI_Buffer_attach(attached.data(), static_cast<int>(attached.size()));
    MPI_Request r[2];
    MPI_Irecv(got.data(), count, type, peer, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Ibsend(mine.data(), count, type, peer, 1, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    void* detached = nullptr;
    int detached_size = 0;
    MPI_Buffer_detach(&detached, &detached_size);
    EXPECT_EQ(got, want) << "Ibsend";
    // Irsend: the receive is posted before the handshake that lets the peer send.
    got = blank;
    MPI_Irecv(got.data(), count, type, peer, 2, MPI_COMM_WORLD, &r[0]);
    MPI_Sendrecv(nullptr, 0, MPI_BYTE, peer, 3, nullptr, 0, MPI_BYTE, peer, 3, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Irsend(mine.data(), count, type, peer, 2, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    EXPECT_EQ(got, want) << "Irsend";
  }
  expect_packed(before, 4);
}

// The data is in place once MPI_Request_get_status reports the receive complete, before any
// completion function has seen the request (which the application must still complete).
TEST(MoreP2p, RequestGetStatusSeesTheDataInPlace) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  Types types;
  const int me = world_rank(), peer = 1 - me;
  const strider_stats before = stats();
  const int count = 3, n = 200;
  const std::vector<int> mine = numbered(me, n), theirs = numbered(peer, n);
  const std::vector<int> blank(n, -1);
  const std::vector<int> want = expected(types.indexed, count, theirs, blank);
  std::vector<int> got = blank;
  MPI_Request r[2];
  MPI_Irecv(got.data(), count, types.indexed, peer, 1, MPI_COMM_WORLD, &r[0]);
  // The receive is posted (and offered, with same-node offers) before the send.
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Isend(mine.data(), count, types.indexed, peer, 1, MPI_COMM_WORLD, &r[1]);
  int flag = 0;
  MPI_Status status;
  while (!flag) ASSERT_EQ(MPI_Request_get_status(r[0], &flag, &status), MPI_SUCCESS);
  int received = 0;
  MPI_Get_count(&status, types.indexed, &received);
  EXPECT_EQ(received, count);
  EXPECT_EQ(got, want) << "after MPI_Request_get_status";
  ASSERT_NE(r[0], MPI_REQUEST_NULL) << "get_status must not free the request";
  MPI_Status statuses[2];
  MPI_Waitall(2, r, statuses);
  EXPECT_EQ(got, want) << "after the wait";
  received = 0;
  MPI_Get_count(&statuses[0], types.indexed, &received);
  EXPECT_EQ(received, count) << "the wait's status after MPI_Request_get_status";
  expect_packed(before, 1);
}

// The same with persistent requests, started twice: the status of the wait that follows
// MPI_Request_get_status still counts what arrived (by the MPI or by a same-node offer).
TEST(MoreP2p, RequestGetStatusThenWaitOnPersistentRequests) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  Types types;
  const int me = world_rank(), peer = 1 - me;
  const int count = 3, n = 200;
  const std::vector<int> mine = numbered(me, n), theirs = numbered(peer, n);
  const std::vector<int> blank(n, -1);
  const std::vector<int> want = expected(types.indexed, count, theirs, blank);
  std::vector<int> got = blank;
  MPI_Request recv = MPI_REQUEST_NULL, send = MPI_REQUEST_NULL;
  ASSERT_EQ(MPI_Recv_init(got.data(), count, types.indexed, peer, 2, MPI_COMM_WORLD, &recv),
            MPI_SUCCESS);
  ASSERT_EQ(MPI_Send_init(mine.data(), count, types.indexed, peer, 2, MPI_COMM_WORLD, &send),
            MPI_SUCCESS);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    got = blank;
    ASSERT_EQ(MPI_Start(&recv), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    ASSERT_EQ(MPI_Start(&send), MPI_SUCCESS);
    int flag = 0;
    MPI_Status status;
    while (!flag) ASSERT_EQ(MPI_Request_get_status(recv, &flag, &status), MPI_SUCCESS);
    int received = 0;
    MPI_Get_count(&status, types.indexed, &received);
    EXPECT_EQ(received, count) << "MPI_Request_get_status";
    MPI_Status waited;
    ASSERT_EQ(MPI_Wait(&recv, &waited), MPI_SUCCESS);
    received = 0;
    MPI_Get_count(&waited, types.indexed, &received);
    if (!wait_after_get_status_empties_persistent()) {
      EXPECT_EQ(received, count) << "the wait after MPI_Request_get_status";
    }
    EXPECT_EQ(got, want);
    ASSERT_EQ(MPI_Wait(&send, MPI_STATUS_IGNORE), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);  // both rounds' messages apart
  }
  MPI_Request_free(&recv);
  MPI_Request_free(&send);
}

// A receive whose request was freed and that never matches must not hold MPI_Finalize (where
// Strider drains such operations): it is cancelled there. Checked by the run ending at all.
TEST(MoreP2p, FreedUnmatchedReceiveDoesNotHoldFinalize) {
  if (!strider_loaded()) GTEST_SKIP() << "a Strider behaviour";
  static std::vector<int> never(64, -1);  // outlives the test: the receive is live until then
  MPI_Datatype type;
  MPI_Type_vector(8, 2, 4, MPI_INT, &type);
  MPI_Type_commit(&type);
  MPI_Request r;
  MPI_Irecv(never.data(), 1, type, MPI_ANY_SOURCE, 32000, MPI_COMM_WORLD, &r);
  MPI_Type_free(&type);
  EXPECT_EQ(MPI_Request_free(&r), MPI_SUCCESS);
  EXPECT_EQ(r, MPI_REQUEST_NULL);
}

#if STRIDER_HAVE_MPI4_P2P
TEST(MoreP2p, LargeCountCalls) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  Types types;
  const int me = world_rank(), peer = 1 - me;
  const strider_stats before = stats();
  int calls = 0;
  for (MPI_Datatype type : {types.vector, types.indexed}) {
    const int count = 3, n = 200;
    const std::vector<int> mine = numbered(me, n), theirs = numbered(peer, n);
    const std::vector<int> blank(n, -1);
    const std::vector<int> want = expected(type, count, theirs, blank);
    const MPI_Count c = count;
    auto check = [&](const std::vector<int>& got, const char* what) {
      EXPECT_EQ(got, want) << what;
    };
    // Send_c / Recv_c, then Isend_c + Irecv_c, Ssend_c, Bsend_c, Mrecv_c, Imrecv_c, Sendrecv_c
    // and Sendrecv_replace_c, rank 0 sending first where the call is one-sided.
    std::vector<int> got = blank;
    MPI_Status status;
    if (me == 0) {
      MPI_Send_c(mine.data(), c, type, peer, 1, MPI_COMM_WORLD);
      MPI_Recv_c(got.data(), c, type, peer, 1, MPI_COMM_WORLD, &status);
    } else {
      MPI_Recv_c(got.data(), c, type, peer, 1, MPI_COMM_WORLD, &status);
      MPI_Send_c(mine.data(), c, type, peer, 1, MPI_COMM_WORLD);
    }
    check(got, "Send_c/Recv_c");
    MPI_Count received = 0;
    MPI_Get_count_c(&status, type, &received);
    EXPECT_EQ(received, c);

    got = blank;
    MPI_Request r[2];
    MPI_Irecv_c(got.data(), c, type, peer, 2, MPI_COMM_WORLD, &r[0]);
    MPI_Isend_c(mine.data(), c, type, peer, 2, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    check(got, "Isend_c/Irecv_c");

    got = blank;
    MPI_Irecv_c(got.data(), c, type, peer, 3, MPI_COMM_WORLD, &r[0]);
    MPI_Issend_c(mine.data(), c, type, peer, 3, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    check(got, "Issend_c");

    got = blank;
    MPI_Message message;
    if (me == 0) {
      MPI_Ssend_c(mine.data(), c, type, peer, 4, MPI_COMM_WORLD);
      MPI_Mprobe(peer, 4, MPI_COMM_WORLD, &message, &status);
      MPI_Mrecv_c(got.data(), c, type, &message, &status);
    } else {
      MPI_Mprobe(peer, 4, MPI_COMM_WORLD, &message, &status);
      MPI_Mrecv_c(got.data(), c, type, &message, &status);
      MPI_Ssend_c(mine.data(), c, type, peer, 4, MPI_COMM_WORLD);
    }
    check(got, "Ssend_c/Mrecv_c");

    got = blank;
    std::vector<char> attached(1 << 16);
    MPI_Buffer_attach(attached.data(), static_cast<int>(attached.size()));
    MPI_Bsend_c(mine.data(), c, type, peer, 5, MPI_COMM_WORLD);
    MPI_Mprobe(peer, 5, MPI_COMM_WORLD, &message, &status);
    MPI_Imrecv_c(got.data(), c, type, &message, &r[0]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    void* detached = nullptr;
    int detached_size = 0;
    MPI_Buffer_detach(&detached, &detached_size);
    check(got, "Bsend_c/Imrecv_c");

    got = blank;
    MPI_Sendrecv_c(mine.data(), c, type, peer, 6, got.data(), c, type, peer, 6, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
    check(got, "Sendrecv_c");

    got = mine;
    MPI_Sendrecv_replace_c(got.data(), c, type, peer, 7, peer, 7, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE);
    EXPECT_EQ(got, expected(type, count, theirs, mine)) << "Sendrecv_replace_c";
    calls += 7;  // sends (and receives) per type above
  }
  expect_packed(before, calls);
}
#endif

}  // namespace
}  // namespace strider::testing
