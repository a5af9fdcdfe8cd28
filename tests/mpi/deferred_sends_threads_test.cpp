// Deferred sends under MPI_THREAD_MULTIPLE (docs/bursts.md, B7 and B8): one queue serves every
// thread, and a flush by any thread starts them all. These cases fail (wrong order or data, a
// completion before the send started, or a hang until the test's timeout) if a thread's send
// overtakes one it posted before, if a call of one thread does not wait for another thread's
// flush under way, or if nothing starts a thread's sends while every other thread blocks in an
// MPI call it entered before they were queued. Two ranks, host buffers with
// STRIDER_P2P_HOST=pack, without same-node offers (they are off under MPI_THREAD_MULTIPLE), with
// the progress thread (its default, where the rank has a CPU to spare) and without it
// (STRIDER_PROGRESS_US=0), where nothing may be deferred: the same cases must pass.
// One more case checks that completion calls of several threads each finish their own requests.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

constexpr int kInts = 32;  // ints per message, at stride 2 on the sender
constexpr int kThreads = 4;

bool multiple() {
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  return provided == MPI_THREAD_MULTIPLE;
}

// Message `m` of sender thread `t`: its ints say whose it is.
int message_id(int t, int m) { return 1 + t * 100000 + m; }
std::vector<int> sent_ints(int t, int m) {
  std::vector<int> v(2 * kInts);
  for (int i = 0; i < 2 * kInts; ++i) v[i] = message_id(t, m) * 64 + i;
  return v;
}

class DeferredThreads : public WorldCommTest {
 protected:
  void SetUp() override {
    WorldCommTest::SetUp();
    if (!multiple()) GTEST_SKIP() << "the MPI does not provide MPI_THREAD_MULTIPLE";
    if (size_ < 2) GTEST_SKIP() << "needs two ranks";
  }
};

// Each of rank 0's threads posts bursts of Isends with its own tag and completes them its own
// way (Waitall, a Test loop, one Wait each), while the other threads post and flush; rank 1
// receives each thread's messages in order, on as many threads. Every message must arrive
// whole, and in its thread's order: the MPI orders the messages of one thread, and Strider must
// not reorder them.
TEST_F(DeferredThreads, EachThreadsSendsKeepTheirOrder) {
  constexpr int kBursts = 12, kPerBurst = 10;
  const StridedInts strided(kInts);
  const std::uint64_t deferred_before = strider_loaded() ? stats().sends_deferred : 0;
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937 rng(static_cast<std::uint32_t>(17 + t));
      if (rank_ == 0) {
        for (int b = 0; b < kBursts; ++b) {
          std::vector<std::vector<int>> data(kPerBurst);
          std::vector<MPI_Request> requests(kPerBurst, MPI_REQUEST_NULL);
          for (int k = 0; k < kPerBurst; ++k) {
            data[k] = sent_ints(t, b * kPerBurst + k);
            if (MPI_Isend(data[k].data(), 1, strided.type, 1, t, comm_, &requests[k]) !=
                MPI_SUCCESS) {
              ++failures;
            }
          }
          switch (rng() % 3) {
            case 0:
              if (MPI_Waitall(kPerBurst, requests.data(), MPI_STATUSES_IGNORE) != MPI_SUCCESS)
                ++failures;
              break;
            case 1: {
              int done = 0;
              while (!done) {
                if (MPI_Testall(kPerBurst, requests.data(), &done, MPI_STATUSES_IGNORE) !=
                    MPI_SUCCESS) {
                  ++failures;
                  break;
                }
              }
              break;
            }
            default:
              for (MPI_Request& r : requests) {
                if (MPI_Wait(&r, MPI_STATUS_IGNORE) != MPI_SUCCESS) ++failures;
              }
          }
          for (const MPI_Request& r : requests) {
            if (r != MPI_REQUEST_NULL) ++failures;
          }
        }
      } else if (rank_ == 1) {
        std::vector<int> got(kInts);
        for (int m = 0; m < kBursts * kPerBurst; ++m) {
          MPI_Status status;
          if (MPI_Recv(got.data(), kInts, MPI_INT, 0, t, comm_, &status) != MPI_SUCCESS) {
            ++failures;
            continue;
          }
          const std::vector<int> s = sent_ints(t, m);
          for (int i = 0; i < kInts; ++i) {
            if (got[i] != s[2 * i]) {
              if (failures++ < 3) {
                ADD_FAILURE() << "thread " << t << " message " << m << ": int " << i << " is "
                              << got[i] << ", expected " << s[2 * i];
              }
              break;
            }
          }
        }
      }
    });
  }
  for (std::thread& th : pool) th.join();
  EXPECT_EQ(failures.load(), 0);
  if (rank_ == 0 && strider_loaded()) {
    EXPECT_EQ(
        stats().sends_deferred - deferred_before,
        strider_defers_sends() ? static_cast<std::uint64_t>(kThreads * kBursts * kPerBurst) : 0u)
        << "every send deferred where the progress thread runs, none elsewhere";
  }
  MPI_Barrier(comm_);
}

// Rank 0's thread B blocks in MPI_Recv for rank 1's reply; then its thread A posts the Isend that
// rank 1 waits for before it replies, and waits for B without calling the MPI. B's call flushed
// before the send was queued: only Strider's progress thread can start it, and where none runs
// the send must not be deferred. Otherwise the three would wait for each other; after 30 s A
// gives up and completes its send (the test fails rather than hangs).
TEST_F(DeferredThreads, AThreadsSendStartsWhileTheOthersBlock) {
  const StridedInts strided(kInts);
  constexpr int kRequestTag = 7, kReplyTag = 8;
  if (rank_ == 0) {
    std::atomic<bool> receiving{false}, replied{false};
    std::vector<int> reply(kInts, -1);
    std::thread b([&] {
      receiving = true;
      EXPECT_EQ(MPI_Recv(reply.data(), kInts, MPI_INT, 1, kReplyTag, comm_, MPI_STATUS_IGNORE),
                MPI_SUCCESS);
      replied = true;
    });
    while (!receiving) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // B inside MPI_Recv
    std::vector<int> data = sent_ints(0, 0);
    MPI_Request request = MPI_REQUEST_NULL;
    ASSERT_EQ(MPI_Isend(data.data(), 1, strided.type, 1, kRequestTag, comm_, &request),
              MPI_SUCCESS);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!replied && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    EXPECT_TRUE(replied.load()) << "the send was not started while the other thread blocked";
    EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
    b.join();
    for (int i = 0; i < kInts; ++i) EXPECT_EQ(reply[i], 1000 + i);
  } else if (rank_ == 1) {
    std::vector<int> got(kInts, -1);
    ASSERT_EQ(MPI_Recv(got.data(), kInts, MPI_INT, 0, kRequestTag, comm_, MPI_STATUS_IGNORE),
              MPI_SUCCESS);
    const std::vector<int> s = sent_ints(0, 0);
    for (int i = 0; i < kInts; ++i) EXPECT_EQ(got[i], s[2 * i]);
    std::vector<int> reply(kInts);
    for (int i = 0; i < kInts; ++i) reply[i] = 1000 + i;
    ASSERT_EQ(MPI_Send(reply.data(), kInts, MPI_INT, 0, kReplyTag, comm_), MPI_SUCCESS);
  }
  MPI_Barrier(comm_);
}

// Rank 0's thread U queues a large burst, thread T then queues one send, and U's next call
// flushes both (U's packs take milliseconds on the CPU). T's MPI_Wait, made while that flush
// packs, must wait for it: its request is the MPI's inactive persistent send until the flush
// starts it, and a Wait that went ahead would return at once and free it before it was
// started. Rank 1 must get every message (bounded: 30 s, then the test fails, not hangs). The
// sends are deferred where the progress thread runs (which cannot flush meanwhile: U's flush
// holds the queue).
TEST_F(DeferredThreads, ACallWaitsForAnotherThreadsFlush) {
  constexpr int kBigInts = 1 << 17, kBigSends = 40;
  constexpr int kBurstTag = 0, kLoneTag = 1;
  const StridedInts big(kBigInts);
  const StridedInts small(kInts);
  std::vector<MPI_Request> requests;
  std::vector<std::vector<int>> data;
  if (rank_ == 0) {
    std::atomic<int> stage{0};  // 1: U queued its burst; 2: T queued its send
    std::thread u([&] {
      data.assign(kBigSends, std::vector<int>(2 * kBigInts));
      requests.assign(kBigSends, MPI_REQUEST_NULL);
      for (int k = 0; k < kBigSends; ++k) {
        for (int i = 0; i < 2 * kBigInts; ++i) data[k][i] = k * 7 + i;
        EXPECT_EQ(MPI_Isend(data[k].data(), 1, big.type, 1, kBurstTag, comm_, &requests[k]),
                  MPI_SUCCESS);
      }
      stage = 1;
      while (stage.load() < 2) std::this_thread::yield();
      EXPECT_EQ(MPI_Waitall(kBigSends, requests.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
    });
    while (stage.load() < 1) std::this_thread::yield();
    std::vector<int> lone = sent_ints(1, 0);
    MPI_Request request = MPI_REQUEST_NULL;
    ASSERT_EQ(MPI_Isend(lone.data(), 1, small.type, 1, kLoneTag, comm_, &request), MPI_SUCCESS);
    stage = 2;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // U's flush is packing
    EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(request, MPI_REQUEST_NULL);
    u.join();
  } else if (rank_ == 1) {
    std::vector<int> lone(kInts, -1);
    std::vector<std::vector<int>> got(kBigSends, std::vector<int>(kBigInts, -1));
    requests.assign(kBigSends + 1, MPI_REQUEST_NULL);
    ASSERT_EQ(MPI_Irecv(lone.data(), kInts, MPI_INT, 0, kLoneTag, comm_, &requests[kBigSends]),
              MPI_SUCCESS);
    for (int k = 0; k < kBigSends; ++k) {
      ASSERT_EQ(MPI_Irecv(got[k].data(), kBigInts, MPI_INT, 0, kBurstTag, comm_, &requests[k]),
                MPI_SUCCESS);
    }
    int done = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done && std::chrono::steady_clock::now() < until) {
      ASSERT_EQ(MPI_Testall(kBigSends + 1, requests.data(), &done, MPI_STATUSES_IGNORE),
                MPI_SUCCESS);
    }
    ASSERT_TRUE(done) << "not every message arrived within 30 s";
    const std::vector<int> s = sent_ints(1, 0);
    for (int i = 0; i < kInts; ++i) ASSERT_EQ(lone[i], s[2 * i]) << i;
    for (int k = 0; k < kBigSends; ++k) {
      for (int i = 0; i < kBigInts; ++i) ASSERT_EQ(got[k][i], k * 7 + 2 * i) << k << " " << i;
    }
  }
  MPI_Barrier(comm_);
}

// Every thread of both ranks exchanges bursts with the other rank on its own tag and completes
// them with a loop of Waitany, Testany, Waitsome or Testsome. Those calls claim an operation
// only once the MPI reports its request complete, when the MPI may already have handed the freed
// handle to another thread's new request: each receive must still be finished as itself (its
// data whole in its own buffer, its status its own), and every request completed once.
TEST_F(DeferredThreads, ThreadsCompletingSomeRequestsFinishTheirOwn) {
  if (size_ < 2 || rank_ > 1) {
    MPI_Barrier(comm_);
    return;
  }
  constexpr int kRounds = 48, kPerBurst = 8;
  const StridedInts strided(kInts);
  const int peer = 1 - rank_;
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < kThreads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937 rng(static_cast<std::uint32_t>(29 + 7 * t + rank_));
      for (int round = 0; round < kRounds; ++round) {
        std::vector<std::vector<int>> out(kPerBurst), in(kPerBurst);
        std::vector<MPI_Request> requests(2 * kPerBurst, MPI_REQUEST_NULL);
        for (int k = 0; k < kPerBurst; ++k) {
          in[k].assign(2 * kInts, -1);
          if (MPI_Irecv(in[k].data(), 1, strided.type, peer, t, comm_, &requests[k]) !=
              MPI_SUCCESS) {
            ++failures;
          }
        }
        for (int k = 0; k < kPerBurst; ++k) {
          out[k] = sent_ints(t, round * kPerBurst + k);
          if (MPI_Isend(out[k].data(), 1, strided.type, peer, t, comm_, &requests[kPerBurst + k]) !=
              MPI_SUCCESS) {
            ++failures;
          }
        }
        std::vector<int> seen(2 * kPerBurst, 0);
        const auto check = [&](int i, const MPI_Status& status) {
          ++seen[i];
          if (i >= kPerBurst) return;
          int count = -1;
          MPI_Get_count(&status, strided.type, &count);
          const std::vector<int> s = sent_ints(t, round * kPerBurst + i);
          bool whole = status.MPI_SOURCE == peer && status.MPI_TAG == t && count == 1;
          for (int j = 0; j < 2 * kInts; ++j) whole &= in[i][j] == (j % 2 == 0 ? s[j] : -1);
          if (!whole && failures++ < 3) {
            ADD_FAILURE() << "rank " << rank_ << " thread " << t << " round " << round
                          << " receive " << i << ": source " << status.MPI_SOURCE << " tag "
                          << status.MPI_TAG << " count " << count << ", first int " << in[i][0]
                          << " (expected " << s[0] << ")";
          }
        };
        const int how = static_cast<int>(rng() % 4);
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        for (int left = 2 * kPerBurst; left > 0;) {
          if (std::chrono::steady_clock::now() > until) {
            ++failures;
            ADD_FAILURE() << "rank " << rank_ << " thread " << t << ": not done within 30 s";
            break;
          }
          int index = MPI_UNDEFINED, flag = 1, outcount = 0;
          std::vector<int> indices(2 * kPerBurst);
          std::vector<MPI_Status> statuses(2 * kPerBurst);
          int rc = MPI_SUCCESS;
          switch (how) {
            case 0:
              rc = MPI_Waitany(2 * kPerBurst, requests.data(), &index, statuses.data());
              break;
            case 1:
              rc = MPI_Testany(2 * kPerBurst, requests.data(), &index, &flag, statuses.data());
              break;
            case 2:
              rc = MPI_Waitsome(2 * kPerBurst, requests.data(), &outcount, indices.data(),
                                statuses.data());
              break;
            default:
              rc = MPI_Testsome(2 * kPerBurst, requests.data(), &outcount, indices.data(),
                                statuses.data());
          }
          if (rc != MPI_SUCCESS) {
            ++failures;
            break;
          }
          if (how < 2 && flag && index != MPI_UNDEFINED) {
            check(index, statuses[0]);
            --left;
          }
          for (int k = 0; how >= 2 && k < outcount; ++k) {
            check(indices[k], statuses[k]);
            --left;
          }
        }
        for (int i = 0; i < 2 * kPerBurst; ++i) {
          if (seen[i] != 1 || requests[i] != MPI_REQUEST_NULL) ++failures;
        }
      }
    });
  }
  for (std::thread& th : pool) th.join();
  EXPECT_EQ(failures.load(), 0);
  MPI_Barrier(comm_);
}

// Each rank's thread A completes a served receive (a strided type) from itself with MPI_Waitany
// while its thread C churns requests Strider does not track (count 0) on another communicator.
// A handle the MPI frees in A's Waitany may go at once to C's request: C's MPI_Wait must not
// take A's operation, and A's receive must be unpacked when its Waitany returns (a review's
// reproducer: 273 of 100000 receives were not, on MPICH 4.0.2, where under MULTIPLE Waitany
// claimed operations after the MPI reported them complete).
TEST_F(DeferredThreads, AnUntrackedRequestOnAReusedHandleTakesNothing) {
  constexpr int kIterations = 20000;
  MPI_Comm other = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_SELF, &other);
  const StridedInts strided(4);
  std::atomic<bool> stop{false};
  std::thread c([&] {
    int x = 0, y = 7;
    while (!stop) {
      MPI_Request q = MPI_REQUEST_NULL;
      MPI_Irecv(&x, 0, MPI_INT, 0, 5, other, &q);
      MPI_Send(&y, 0, MPI_INT, 0, 5, other);
      MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
  });
  int not_unpacked = 0;
  for (int it = 1; it <= kIterations; ++it) {
    int got[8] = {0, -1, 0, -1, 0, -1, 0, -1};
    const int sent[4] = {it, it + 1, it + 2, it + 3};
    MPI_Request r = MPI_REQUEST_NULL, q = MPI_REQUEST_NULL;
    MPI_Irecv(got, 1, strided.type, 0, 1, MPI_COMM_SELF, &r);
    MPI_Isend(sent, 4, MPI_INT, 0, 1, MPI_COMM_SELF, &q);
    int index = MPI_UNDEFINED;
    MPI_Waitany(1, &r, &index, MPI_STATUS_IGNORE);
    if (got[0] != it || got[2] != it + 1 || got[4] != it + 2 || got[6] != it + 3) ++not_unpacked;
    MPI_Wait(&q, MPI_STATUS_IGNORE);
  }
  stop = true;
  c.join();
  MPI_Comm_free(&other);
  EXPECT_EQ(not_unpacked, 0) << "receives not unpacked when MPI_Waitany returned";
  MPI_Barrier(comm_);
}

}  // namespace
}  // namespace strider::testing
