// Early arrivals (docs/bursts.md, "Waves across completion calls"): where the application
// completes its receives one call at a time, a completion call that unpacks a receive asks the MPI
// (MPI_Request_get_status) about receives of later calls, and unpacks those that arrived in its
// wave. These host-buffer runs check what must hold whether or not any receive joins a wave (on
// the CPU none does: a wave's kernel unpacks GPU receives, tests/gpu/gpu_unpack_wave_test.cpp):
// for loops of Waitany, Testany, Wait, Test and Waitsome over a burst that has fully arrived,
// every request reported once, with its source, tag, count and data; a truncated message reported
// by its own call with MPI_ERR_TRUNCATE. Two ranks, STRIDER_P2P_HOST=pack; run under
// MPI_THREAD_SINGLE with and without offers, MPI_THREAD_MULTIPLE and STRIDER_BURST=0.
#include <gtest/gtest.h>

#include <vector>

#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

constexpr int kInts = 32;      // ints per message, at stride 2 on both sides
constexpr int kMessages = 24;  // one burst
constexpr int kPrimeTag = 99;

enum class Loop { Waitany, Testany, Wait, Test, Waitsome };

class EarlyArrivals : public WorldCommTest {
 protected:
  // Rank 0 sends a burst (tag k for message k, `long_one` with twice the ints); rank 1, whose last
  // completion finished one receive, posts the receives, waits until the burst was sent, then
  // completes them by `loop`. `check(k, rc, status, buffer)` sees each receive once.
  template <class Check>
  void burst(Loop loop, int long_one, Check check) {
    const StridedInts strided(kInts), twice(2 * kInts);
    if (rank_ == 0) {
      std::vector<int> prime(2 * kInts, 1);
      ASSERT_EQ(MPI_Send(prime.data(), 1, strided.type, 1, kPrimeTag, comm_), MPI_SUCCESS);
      MPI_Barrier(comm_);
      for (int k = 0; k < kMessages; ++k) {
        const std::vector<int> s = message_ints(k, k == long_one ? 2 * kInts : kInts);
        ASSERT_EQ(MPI_Send(s.data(), 1, k == long_one ? twice.type : strided.type, 1, k, comm_),
                  MPI_SUCCESS);
      }
      MPI_Barrier(comm_);
      return;
    }
    if (rank_ != 1) {
      MPI_Barrier(comm_);
      MPI_Barrier(comm_);
      return;
    }
    std::vector<int> prime(2 * kInts);
    ASSERT_EQ(MPI_Recv(prime.data(), 1, strided.type, 0, kPrimeTag, comm_, MPI_STATUS_IGNORE),
              MPI_SUCCESS);  // a completion that finished one receive
    std::vector<std::vector<int>> got(kMessages, std::vector<int>(2 * kInts, -1));
    std::vector<MPI_Request> r(kMessages, MPI_REQUEST_NULL);
    for (int k = 0; k < kMessages; ++k) {
      ASSERT_EQ(MPI_Irecv(got[k].data(), 1, strided.type, 0, k, comm_, &r[k]), MPI_SUCCESS);
    }
    MPI_Barrier(comm_);
    MPI_Barrier(comm_);  // every message sent (eagerly: they are small)
    std::vector<int> seen(kMessages, 0);
    for (int left = kMessages; left > 0;) {
      MPI_Status st;
      int index = MPI_UNDEFINED, flag = 1, rc = MPI_SUCCESS;
      if (loop == Loop::Waitany) {
        rc = MPI_Waitany(kMessages, r.data(), &index, &st);
      } else if (loop == Loop::Testany) {
        rc = MPI_Testany(kMessages, r.data(), &index, &flag, &st);
      } else if (loop == Loop::Wait || loop == Loop::Test) {
        index = kMessages - left;
        rc = loop == Loop::Wait ? MPI_Wait(&r[index], &st) : MPI_Test(&r[index], &flag, &st);
      } else {
        int outcount = 0;
        std::vector<int> indices(kMessages);
        std::vector<MPI_Status> sts(kMessages);
        rc = MPI_Waitsome(kMessages, r.data(), &outcount, indices.data(), sts.data());
        ASSERT_NE(outcount, MPI_UNDEFINED);
        for (int j = 0; j < outcount; ++j) {
          const int k = indices[j];
          ++seen[k];
          check(k, rc == MPI_ERR_IN_STATUS ? sts[j].MPI_ERROR : rc, sts[j], got[k]);
        }
        left -= outcount;
        continue;
      }
      if (!flag) continue;
      ASSERT_NE(index, MPI_UNDEFINED) << left << " left";
      ++seen[index];
      check(index, rc, st, got[index]);
      --left;
    }
    EXPECT_EQ(seen, std::vector<int>(kMessages, 1));
    for (MPI_Request q : r) EXPECT_EQ(q, MPI_REQUEST_NULL);
  }

  // Message k arrived whole: status and data.
  static void expect_message(int k, int rc, const MPI_Status& st, const std::vector<int>& got) {
    EXPECT_EQ(rc, MPI_SUCCESS) << k;
    EXPECT_EQ(st.MPI_SOURCE, 0) << k;
    EXPECT_EQ(st.MPI_TAG, k);
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    EXPECT_EQ(count, kInts) << k;
    const std::vector<int> s = message_ints(k, kInts);
    for (int i = 0; i < kInts; ++i) ASSERT_EQ(got[2 * i], s[2 * i]) << k << " " << i;
    for (int i = 0; i < kInts; ++i) ASSERT_EQ(got[2 * i + 1], -1) << "gap written " << k;
  }
};

TEST_F(EarlyArrivals, EveryLoopGetsEveryMessage) {
  if (size_ < 2) GTEST_SKIP() << "needs 2 ranks";
  for (Loop loop : {Loop::Waitany, Loop::Testany, Loop::Wait, Loop::Test, Loop::Waitsome}) {
    SCOPED_TRACE(static_cast<int>(loop));
    burst(loop, -1, expect_message);
  }
}

// A message longer than its receive: that receive's own call reports MPI_ERR_TRUNCATE, whichever
// wave saw it arrive.
TEST_F(EarlyArrivals, ATruncationIsReportedByItsOwnCall) {
  if (size_ < 2) GTEST_SKIP() << "needs 2 ranks";
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  constexpr int kLong = 5;
  for (Loop loop : {Loop::Waitany, Loop::Wait}) {
    SCOPED_TRACE(static_cast<int>(loop));
    burst(loop, kLong, [](int k, int rc, const MPI_Status& st, const std::vector<int>& got) {
      if (k != kLong) return expect_message(k, rc, st, got);
      int error_class = MPI_SUCCESS;
      MPI_Error_class(rc, &error_class);
      EXPECT_EQ(error_class, MPI_ERR_TRUNCATE);
    });
  }
}

}  // namespace
}  // namespace strider::testing
