// A deferred send its flush cannot start (docs/bursts.md B9) leaves the application's request
// inactive: Wait and Test complete an inactive request at once, but Waitany, Testany, Waitsome
// and Testsome skip it, so without Strider reporting it a loop of them would never see that
// send complete. Run with STRIDER_TEST_FAIL_DEFERRED=1 (every deferred send fails as a failed
// pack would), STRIDER_P2P_HOST=pack and MPI_THREAD_SINGLE, where sends are deferred; each
// rank sends to itself. Checks, for each of the four calls: every request reported exactly
// once, the failed sends with their error, the good receive with its data, every request
// MPI_REQUEST_NULL after, and MPI_UNDEFINED from one more call. Under MPI_THREAD_SERIALIZED and
// MULTIPLE, where the progress thread flushes, also that the error handler of a send the
// thread's flush failed runs on the application's thread, at its next MPI call. With
// STRIDER_TEST_FAIL_DEFERRED=2, that a send from such a handler does not overtake the sends the
// flush has still to start.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

constexpr int kInts = 16;

// Whether this run defers sends and fails every `every`-th one (STRIDER_TEST_FAIL_DEFERRED).
bool failing_deferred_sends(const char* every = "1") {
  return strider_defers_sends() && env_is("STRIDER_TEST_FAIL_DEFERRED", every);
}

// A duplicate of MPI_COMM_WORLD with `on_error` as its error handler, and kInts ints at stride 2
// as a type, freed at the end of the scope.
struct HandledComm {
  explicit HandledComm(MPI_Comm_errhandler_function* on_error) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_create_errhandler(on_error, &handler);
    MPI_Comm_set_errhandler(comm, handler);
    MPI_Type_vector(kInts, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
  }
  ~HandledComm() {
    MPI_Type_free(&strided);
    MPI_Comm_free(&comm);
    MPI_Errhandler_free(&handler);
  }
  HandledComm(const HandledComm&) = delete;
  HandledComm& operator=(const HandledComm&) = delete;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  MPI_Datatype strided = MPI_DATATYPE_NULL;
};

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

// The calls of note_error, and the thread of the last.
std::atomic<int> handler_calls{0};
std::thread::id handler_thread;

void note_error(MPI_Comm*, int*, ...) {
  handler_thread = std::this_thread::get_id();
  handler_calls.fetch_add(1);
}

// A deferred send that the progress thread's flush fails (the rank calls no MPI function until
// the thread has flushed) has its communicator's error handler called once, at the application's
// next MPI call, on the application's thread (not on Strider's thread at the flush), and its
// completion reports the error.
TEST(DeferredSendFailures, TheThreadsFailuresReachTheApplicationsThread) {
  if (!failing_deferred_sends()) GTEST_SKIP() << "needs STRIDER_TEST_FAIL_DEFERRED=1, deferral";
  const HandledComm c(note_error);
  std::vector<int> a(2 * kInts, 7);
  handler_calls = 0;
  const std::uint64_t flushes = stats().progress_flushes;
  MPI_Request r = MPI_REQUEST_NULL;
  ASSERT_EQ(MPI_Isend(a.data(), 1, c.strided, world_rank(), 94, c.comm, &r), MPI_SUCCESS);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (stats().progress_flushes == flushes && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
  }
  const bool thread_flushed = stats().progress_flushes != flushes;
  if (thread_flushed) EXPECT_EQ(handler_calls.load(), 0) << "called at the thread's flush";
  const int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  EXPECT_EQ(error_class, MPI_ERR_OTHER);
  EXPECT_EQ(handler_calls.load(), 1);
  EXPECT_EQ(handler_thread, std::this_thread::get_id());
  if (!thread_flushed) GTEST_SKIP() << "no progress thread flushed in this run";
}

// The int send_marker sends, and how often it did.
int marker = -1;
int markers_sent = 0;

// An error handler that sends `marker` to the calling rank itself with tag 95, by a blocking
// send (never deferred; one int goes eagerly, so it returns without its receive).
void send_marker(MPI_Comm* comm, int*, ...) {
  int me = 0;
  MPI_Comm_rank(*comm, &me);
  if (MPI_Send(&marker, 1, MPI_INT, me, 95, *comm) == MPI_SUCCESS) ++markers_sent;
}

// Run with STRIDER_TEST_FAIL_DEFERRED=2 (every second deferred send fails). Three deferred sends
// to self on one stream, the second failing, whose error handler sends on the same stream: the
// handler runs once the flush has started the other two, so its message comes third. (It used to
// run inside the flush, before the queued sends were started, and a send it made that was not
// deferred overtook them.)
TEST(DeferredSendFailures, AHandlersSendFollowsTheFlush) {
  if (!failing_deferred_sends("2")) GTEST_SKIP() << "needs STRIDER_TEST_FAIL_DEFERRED=2, deferral";
  const HandledComm c(send_marker);
  const int me = world_rank();
  std::vector<std::vector<int>> sources;
  for (int k = 0; k < 3; ++k) sources.emplace_back(2 * kInts, 100 * (k + 1));
  marker = 7;
  std::vector<MPI_Request> r(3, MPI_REQUEST_NULL);
  for (int k = 0; k < 3; ++k) {
    ASSERT_EQ(MPI_Isend(sources[k].data(), 1, c.strided, me, 95, c.comm, &r[k]), MPI_SUCCESS);
  }
  // The first, the third, then the handler's marker (one int).
  for (int expected : {100, 300, 7}) {
    std::vector<int> got(kInts, -1);
    MPI_Status status;
    ASSERT_EQ(MPI_Recv(got.data(), kInts, MPI_INT, me, 95, c.comm, &status), MPI_SUCCESS);
    EXPECT_EQ(got[0], expected);
  }
  std::vector<int> errors(3, MPI_SUCCESS);
  for (int k = 0; k < 3; ++k) errors[k] = MPI_Wait(&r[k], MPI_STATUS_IGNORE);
  EXPECT_EQ(errors[0], MPI_SUCCESS);
  EXPECT_NE(errors[1], MPI_SUCCESS);
  EXPECT_EQ(errors[2], MPI_SUCCESS);
  EXPECT_EQ(markers_sent, 1);
}

}  // namespace
}  // namespace strider::testing
