// The progress thread (docs/bursts.md, B8): a nonblocking send Strider defers must reach its
// receiver while the sender computes without calling the MPI, as an MPI delivers an eager send
// (MPI-4.1 3.7.4). The sender spins on a flag in shared memory that the receiver sets once its
// receive completed, making no MPI call meanwhile: without the thread (STRIDER_PROGRESS_US=0) the
// send waits for the sender's next MPI call, and the flag stays unset. Two ranks on one node,
// host buffers with STRIDER_P2P_HOST=pack; run under MPI_THREAD_SINGLE (the thread runs where
// Strider asks the MPI for MPI_THREAD_SERIALIZED: MPICH) with and without same-node offers, under
// MPI_THREAD_SERIALIZED and MPI_THREAD_MULTIPLE (the thread runs on every MPI), and with the
// thread off.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

constexpr int kInts = 64;  // ints per message, at stride 2 on the sender
constexpr int kTag = 31;

bool deferring() { return strider_defers_sends(); }

// Whether Strider's progress thread runs: deferring, not turned off, the MPI provided
// MPI_THREAD_SERIALIZED (asked for by Strider on MPICH, by the test where
// STRIDER_TEST_THREAD=serialized) or MULTIPLE, and the rank may run on more than one CPU.
bool thread_runs() {
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  return deferring() && !env_is("STRIDER_PROGRESS_US", "0") && provided >= MPI_THREAD_SERIALIZED &&
         spare_cpu();
}

std::vector<int> source(int k) { return message_ints(k, kInts); }

// A counter in memory the ranks of the node share, read and written without MPI calls.
class SharedCounter {
 public:
  explicit SharedCounter(MPI_Comm comm) {
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node_);
    int node_size = 0, size = 0, rank = 0;
    MPI_Comm_size(node_, &node_size);
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(node_, &rank);
    one_node_ = node_size == size;
    void* base = nullptr;
    MPI_Win_allocate_shared(rank == 0 ? sizeof(std::int64_t) : 0, sizeof(std::int64_t),
                            MPI_INFO_NULL, node_, &base, &win_);
    MPI_Aint bytes = 0;
    int unit = 0;
    MPI_Win_shared_query(win_, 0, &bytes, &unit, &value_);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win_);
    if (rank == 0) std::atomic_ref<std::int64_t>(*value_).store(0);
    MPI_Win_sync(win_);
    MPI_Barrier(node_);
    MPI_Win_sync(win_);
  }
  ~SharedCounter() {
    MPI_Win_unlock_all(win_);
    MPI_Win_free(&win_);
    MPI_Comm_free(&node_);
  }
  bool one_node() const { return one_node_; }
  void add() { std::atomic_ref<std::int64_t>(*value_).fetch_add(1); }
  // Spins, calling no MPI, until the counter reaches `n` or `limit` passes; whether it did.
  bool reaches(std::int64_t n, std::chrono::milliseconds limit) const {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::atomic_ref<std::int64_t>(*value_).load() < n) {
      if (std::chrono::steady_clock::now() > until) return false;
    }
    return true;
  }

 private:
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  std::int64_t* value_ = nullptr;
  bool one_node_ = false;
};

class ProgressThread : public WorldCommTest {
 protected:
  // Rank 0 sends `n` messages (tags kTag + k) by MPI_Isend, then computes until rank 1 has
  // received them all; rank 1 receives them (posted before the sends, completed by Waitall) and
  // checks them. Checks that they arrived during the computation where the thread runs, and
  // did not where sends are deferred with no thread.
  void send_then_compute(int n) {
    SharedCounter received(comm_);
    if (!received.one_node()) GTEST_SKIP() << "the ranks are not on one node";
    const StridedInts strided(kInts);
    const strider_stats before = strider_loaded() ? stats() : strider_stats{};
    std::vector<MPI_Request> requests(n, MPI_REQUEST_NULL);
    std::vector<std::vector<int>> data(n);
    if (rank_ == 1) {
      for (int k = 0; k < n; ++k) {
        data[k].assign(kInts, -1);
        ASSERT_EQ(MPI_Irecv(data[k].data(), kInts, MPI_INT, 0, kTag + k, comm_, &requests[k]),
                  MPI_SUCCESS);
      }
    }
    MPI_Barrier(comm_);
    if (rank_ == 0) {
      for (int k = 0; k < n; ++k) {
        data[k] = source(k);
        ASSERT_EQ(MPI_Isend(data[k].data(), 1, strided.type, 1, kTag + k, comm_, &requests[k]),
                  MPI_SUCCESS);
      }
      const bool waits = deferring() && !thread_runs();
      // No MPI call from here until the receiver has everything, or the limit passed. Where
      // nothing is deferred the sends are the MPI's from the start, and whether they reach the
      // receiver without another call of the sender's is the MPI's own progress (Open MPI's
      // shared-memory transport, under MPI_THREAD_MULTIPLE on a loaded machine, once did not
      // within 30 s): not checked.
      const auto limit = std::chrono::milliseconds(waits ? 300 : deferring() ? 30000 : 3000);
      const bool arrived = received.reaches(n, limit);
      if (waits) {
        EXPECT_FALSE(arrived) << "deferred sends started with no MPI call and no thread";
      } else if (deferring()) {
        EXPECT_TRUE(arrived) << "the receiver did not get the sends while the sender computed";
      }
      ASSERT_EQ(MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
      if (strider_loaded()) {
        const strider_stats after = stats();
        EXPECT_EQ(after.sends_deferred - before.sends_deferred,
                  deferring() ? static_cast<std::uint64_t>(n) : 0u);
        const std::uint64_t by_thread = after.progress_flushes - before.progress_flushes;
        if (thread_runs()) {
          EXPECT_GE(by_thread, 1u);
        } else {
          EXPECT_EQ(by_thread, 0u);
        }
      }
    } else if (rank_ == 1) {
      ASSERT_EQ(MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
      for (int k = 0; k < n; ++k) {
        const std::vector<int> s = source(k);
        for (int i = 0; i < kInts; ++i) ASSERT_EQ(data[k][i], s[2 * i]) << k << " " << i;
        received.add();
      }
    }
    MPI_Barrier(comm_);
  }
};

TEST_F(ProgressThread, OneSendArrivesWhileTheSenderComputes) { send_then_compute(1); }

TEST_F(ProgressThread, ABurstArrivesWhileTheSenderComputes) { send_then_compute(24); }

// Twice in a row: the thread flushes again after it fell asleep with nothing queued.
TEST_F(ProgressThread, LaterBurstsArriveToo) {
  send_then_compute(8);
  MPI_Barrier(comm_);
  const auto pause = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  while (std::chrono::steady_clock::now() < pause) {
  }
  send_then_compute(8);
}

// Where the thread should run it does: the level is SERIALIZED or MULTIPLE where the test asked
// for it, and SERIALIZED on MPICH where it asked for less (Strider asks for it there), for a rank
// with a CPU to spare (the tests' launchers leave ranks unbound). A thread that never started
// would otherwise pass the tests above by their no-thread branch.
TEST_F(ProgressThread, RunsWhereExpected) {
  if (!spare_cpu()) GTEST_SKIP() << "this rank may run on one CPU only";
  if (!deferring() || env_is("STRIDER_PROGRESS_US", "0")) GTEST_SKIP() << "no thread wanted";
  const int asked = thread_level_asked();
  const bool expected =
      asked >= MPI_THREAD_SERIALIZED || (on_mpich() && asked < MPI_THREAD_SERIALIZED);
  if (!expected) GTEST_SKIP() << "Strider does not raise the level on this MPI";
  int provided = -1;
  ASSERT_EQ(MPI_Query_thread(&provided), MPI_SUCCESS);
  if (asked == MPI_THREAD_MULTIPLE && provided < MPI_THREAD_MULTIPLE) {
    GTEST_SKIP() << "the MPI does not provide MPI_THREAD_MULTIPLE";
  }
  EXPECT_EQ(provided, std::max(asked, static_cast<int>(MPI_THREAD_SERIALIZED)));
  EXPECT_TRUE(thread_runs());
}

// The level the application asked for (or more) is what it is told.
TEST_F(ProgressThread, ThreadLevelAtLeastTheOneAskedFor) {
  int provided = -1;
  ASSERT_EQ(MPI_Query_thread(&provided), MPI_SUCCESS);
  EXPECT_GE(provided, thread_level_asked());
}

}  // namespace
}  // namespace strider::testing
