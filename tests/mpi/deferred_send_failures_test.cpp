// A deferred send its flush cannot start (docs/bursts.md B9) leaves the application's request
// inactive: Wait and Test complete an inactive request at once, but Waitany, Testany, Waitsome
// and Testsome skip it, so without Strider reporting it a loop of them would never see that
// send complete. Run with STRIDER_TEST_FAIL_DEFERRED=1 (every deferred send fails as a failed
// pack would), STRIDER_P2P_HOST=pack and MPI_THREAD_SINGLE, where sends are deferred; each
// rank sends to itself. Checks, for each of the four calls: every request reported exactly
// once, the failed sends with their error, the good receive with its data, every request
// MPI_REQUEST_NULL after, and MPI_UNDEFINED from one more call.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

constexpr int kInts = 16;

bool failing_deferred_sends() {
  const char* fail = std::getenv("STRIDER_TEST_FAIL_DEFERRED");
  int provided = MPI_THREAD_MULTIPLE;
  MPI_Query_thread(&provided);
  return strider_loaded() && fail && std::strcmp(fail, "1") == 0 && provided != MPI_THREAD_MULTIPLE;
}

enum class Call { Waitany, Testany, Waitsome, Testsome };

// Completes what `call` reports of `r`; `errors[i]` the error request i completed with, and
// `seen[i]` how often it was reported.
void complete_all(Call call, std::vector<MPI_Request>& r, std::vector<int>& errors,
                  std::vector<int>& seen) {
  const int n = static_cast<int>(r.size());
  int left = n;
  for (int rounds = 0; left > 0 && rounds < 1000000; ++rounds) {
    int index = MPI_UNDEFINED, flag = 0, outcount = 0;
    std::vector<int> indices(n);
    std::vector<MPI_Status> statuses(n);
    MPI_Status status;
    if (call == Call::Waitany || call == Call::Testany) {
      const int rc = call == Call::Waitany ? MPI_Waitany(n, r.data(), &index, &status)
                                           : MPI_Testany(n, r.data(), &index, &flag, &status);
      if (call == Call::Testany && !flag) continue;
      ASSERT_NE(index, MPI_UNDEFINED) << left << " left";
      errors[index] = rc;
      ++seen[index];
      --left;
      continue;
    }
    const int rc = call == Call::Waitsome
                       ? MPI_Waitsome(n, r.data(), &outcount, indices.data(), statuses.data())
                       : MPI_Testsome(n, r.data(), &outcount, indices.data(), statuses.data());
    ASSERT_NE(outcount, MPI_UNDEFINED) << left << " left";
    ASSERT_TRUE(rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) << rc;
    for (int k = 0; k < outcount; ++k) {
      errors[indices[k]] = rc == MPI_ERR_IN_STATUS ? statuses[k].MPI_ERROR : MPI_SUCCESS;
      ++seen[indices[k]];
    }
    left -= outcount;
  }
  ASSERT_EQ(left, 0);
}

TEST(DeferredSendFailures, EveryCompletionCallReportsThem) {
  if (!failing_deferred_sends()) GTEST_SKIP() << "needs STRIDER_TEST_FAIL_DEFERRED=1, deferral";
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  const int me = world_rank();
  MPI_Datatype strided;
  MPI_Type_vector(kInts, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  for (Call call : {Call::Waitany, Call::Testany, Call::Waitsome, Call::Testsome}) {
    SCOPED_TRACE(static_cast<int>(call));
    const std::uint64_t deferred_before = stats().sends_deferred;
    std::vector<int> a(2 * kInts), b(2 * kInts), sent(kInts), got(kInts, -1);
    std::iota(a.begin(), a.end(), 0);
    std::iota(b.begin(), b.end(), 100);
    std::iota(sent.begin(), sent.end(), 1000 * (static_cast<int>(call) + 1));
    // [failing send, good receive, failing send]: the receive is matched by a blocking send,
    // which is never deferred and flushes the two before it.
    std::vector<MPI_Request> r(3, MPI_REQUEST_NULL);
    ASSERT_EQ(MPI_Irecv(got.data(), kInts, MPI_INT, me, 90, comm, &r[1]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Isend(a.data(), 1, strided, me, 91, comm, &r[0]), MPI_SUCCESS);
    ASSERT_EQ(MPI_Isend(b.data(), 1, strided, me, 92, comm, &r[2]), MPI_SUCCESS);
    EXPECT_EQ(stats().sends_deferred - deferred_before, 2u);
    ASSERT_EQ(MPI_Send(sent.data(), kInts, MPI_INT, me, 90, comm), MPI_SUCCESS);
    std::vector<int> errors(3, -1), seen(3, 0);
    complete_all(call, r, errors, seen);
    EXPECT_EQ(seen, (std::vector<int>{1, 1, 1}));
    int error_class = MPI_SUCCESS;
    MPI_Error_class(errors[0], &error_class);
    EXPECT_EQ(error_class, MPI_ERR_OTHER);
    MPI_Error_class(errors[2], &error_class);
    EXPECT_EQ(error_class, MPI_ERR_OTHER);
    EXPECT_EQ(errors[1], MPI_SUCCESS);
    EXPECT_EQ(got, sent);
    for (MPI_Request q : r) EXPECT_EQ(q, MPI_REQUEST_NULL);
    int index = 0;
    ASSERT_EQ(MPI_Waitany(3, r.data(), &index, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(index, MPI_UNDEFINED);
  }
  MPI_Type_free(&strided);
  MPI_Comm_free(&comm);
}

}  // namespace
}  // namespace strider::testing
