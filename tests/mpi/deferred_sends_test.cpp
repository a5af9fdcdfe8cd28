// Deferred sends (docs/bursts.md): a nonblocking send Strider packs may wait for the thread's
// next MPI call. These cases fail (hang until the test's timeout, or see the wrong data or
// order) if any call a correct program can block in does not start the deferred sends first:
// calls Strider does not serve (MPI_Barrier, MPI_Win_fence: the generated flush wrappers), a
// host-memory Sendrecv, a collective, a probe loop; and they check what stays the MPI's: order
// across tags and modes, cancel, truncation, MPI_Request_free, MPI_REQUEST_NULL after every
// completion call. Two ranks, host buffers with STRIDER_P2P_HOST=pack; run under
// MPI_THREAD_SINGLE without same-node offers (every send deferred) and with them (a send that
// takes an offer is not), MPI_THREAD_MULTIPLE (deferred where the progress thread runs; no offers)
// and STRIDER_BURST=0 (never deferred: the same cases must pass).
#include <gtest/gtest.h>

#include <vector>

#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

constexpr int kInts = 64;  // ints per message, at stride 2 on the sender

bool deferring() { return strider_defers_sends(); }

// Every other int of a buffer: a type Strider packs.
struct Strided : StridedInts {
  Strided() : StridedInts(kInts) {}
};

// A sender's buffer for message `k`: the strided ints say which message they belong to.
std::vector<int> source(int k) { return message_ints(k, kInts); }
std::vector<int> arrived_as(int k) {
  const std::vector<int> s = source(k);
  std::vector<int> v(kInts);
  for (int i = 0; i < kInts; ++i) v[i] = s[2 * i];
  return v;
}

// Whether same-node offers are off (STRIDER_SAME_NODE=0, or MPI_THREAD_MULTIPLE): a send that
// takes one is not deferred, and whether the receiver's offer is there in time is a race.
bool offers_off() {
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  return env_is("STRIDER_SAME_NODE", "0") || provided == MPI_THREAD_MULTIPLE;
}

// Counts deferred sends over a scope and checks, at its end, that `expected` were deferred
// where this run defers (at most that many where offers may take some).
class DeferredCount {
 public:
  explicit DeferredCount(int expected)
      : expected_(expected), before_(strider_loaded() ? stats().sends_deferred : 0) {}
  ~DeferredCount() {
    if (!strider_loaded()) return;
    const std::uint64_t n = stats().sends_deferred - before_;
    const std::uint64_t expected = deferring() ? static_cast<std::uint64_t>(expected_) : 0u;
    if (offers_off()) {
      EXPECT_EQ(n, expected);
    } else {
      EXPECT_LE(n, expected);
    }
  }

 private:
  int expected_;
  std::uint64_t before_;
};

// Rank 0 posts one strided Isend to rank 1 and then blocks in `block` (the same call on rank
// 1, after its blocking receive): the receive can only complete if `block` starts the send.
template <class Block>
void isend_then_block(Block block) {
  Strided t;
  DeferredCount count(world_rank() == 0 ? 1 : 0);
  if (world_rank() == 0) {
    std::vector<int> s = source(1);
    MPI_Request r;
    ASSERT_EQ(MPI_Isend(s.data(), 1, t.type, 1, 7, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    block();
    ASSERT_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(r, MPI_REQUEST_NULL);
  } else {
    std::vector<int> got(kInts, -1);
    ASSERT_EQ(MPI_Recv(got.data(), kInts, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
              MPI_SUCCESS);
    EXPECT_EQ(got, arrived_as(1));
    block();
  }
}

TEST(DeferredSends, BarrierStartsThem) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  isend_then_block([] { ASSERT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS); });
}

TEST(DeferredSends, HostSendrecvStartsThem) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  isend_then_block([] {
    int mine = world_rank(), theirs = -1;
    const int peer = 1 - world_rank();
    ASSERT_EQ(MPI_Sendrecv(&mine, 1, MPI_INT, peer, 8, &theirs, 1, MPI_INT, peer, 8, MPI_COMM_WORLD,
                           MPI_STATUS_IGNORE),
              MPI_SUCCESS);
    EXPECT_EQ(theirs, peer);
  });
}

TEST(DeferredSends, CollectivesStartThem) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  isend_then_block([] {
    int one = 1, sum = 0;
    ASSERT_EQ(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT_EQ(sum, 2);
  });
  isend_then_block([] {
    MPI_Comm split = MPI_COMM_NULL;
    ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, 0, world_rank(), &split), MPI_SUCCESS);
    MPI_Comm_free(&split);
  });
}

TEST(DeferredSends, OneSidedFenceStartsThem) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  int cell = 0;
  MPI_Win win = MPI_WIN_NULL;
  ASSERT_EQ(MPI_Win_create(&cell, sizeof cell, sizeof cell, MPI_INFO_NULL, MPI_COMM_WORLD, &win),
            MPI_SUCCESS);
  isend_then_block([&] { ASSERT_EQ(MPI_Win_fence(0, win), MPI_SUCCESS); });
  MPI_Win_free(&win);
}

// Rank 0 spins on MPI_Iprobe for rank 1's answer, which rank 1 sends only once the strided
// message arrived.
TEST(DeferredSends, ProbeLoopStartsThem) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  Strided t;
  DeferredCount count(world_rank() == 0 ? 1 : 0);
  if (world_rank() == 0) {
    std::vector<int> s = source(2);
    MPI_Request r;
    ASSERT_EQ(MPI_Isend(s.data(), 1, t.type, 1, 9, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    int flag = 0;
    MPI_Status st;
    while (!flag) ASSERT_EQ(MPI_Iprobe(1, 10, MPI_COMM_WORLD, &flag, &st), MPI_SUCCESS);
    int answer = 0;
    MPI_Recv(&answer, 1, MPI_INT, 1, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT_EQ(answer, 1);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else {
    std::vector<int> got(kInts, -1);
    MPI_Status st;
    ASSERT_EQ(MPI_Probe(0, 9, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    MPI_Recv(got.data(), kInts, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int answer = got == arrived_as(2) ? 1 : 0;
    MPI_Send(&answer, 1, MPI_INT, 0, 10, MPI_COMM_WORLD);
  }
}

// The sender's side of a cancel test: cancels `r`, waits for it, and tells rank 1 on `tag`
// whether the MPI cancelled it.
void cancel_and_tell(MPI_Request& r, int tag) {
  ASSERT_EQ(MPI_Cancel(&r), MPI_SUCCESS);
  MPI_Status st;
  ASSERT_EQ(MPI_Wait(&r, &st), MPI_SUCCESS);
  EXPECT_EQ(r, MPI_REQUEST_NULL);
  int cancelled = 0;
  MPI_Test_cancelled(&st, &cancelled);
  MPI_Send(&cancelled, 1, MPI_INT, 1, tag, MPI_COMM_WORLD);
}

// MPI_Cancel of an Issend: the MPI cancels it or the message arrives (matched by the receiver's
// probe loop, which a synchronous send needs before it can complete). Not deferred: as the MPI's
// persistent synchronous send, its cancel crashed MPICH 5.0.2 over UCX (found by mpi4py's
// test suite). Declared before the other sends of this file: that MPICH also crashes, without
// Strider, cancelling an Issend after OrderAcrossTagsAndModes's sequence of sends.
TEST(DeferredSends, CancelOfAnIssendIsTheMpis) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  Strided t;
  DeferredCount count(0);
  if (world_rank() == 0) {
    std::vector<int> s = source(8);
    MPI_Request r;
    ASSERT_EQ(MPI_Issend(s.data(), 1, t.type, 1, 80, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    cancel_and_tell(r, 81);
  } else {
    int cancelled = -1, told = 0, there = 0;
    bool arrived = false;
    std::vector<int> got(kInts, -1);
    MPI_Request answer;
    MPI_Irecv(&cancelled, 1, MPI_INT, 0, 81, MPI_COMM_WORLD, &answer);
    while (!told) {
      MPI_Test(&answer, &told, MPI_STATUS_IGNORE);
      if (arrived) continue;
      MPI_Iprobe(0, 80, MPI_COMM_WORLD, &there, MPI_STATUS_IGNORE);
      if (!there) continue;
      MPI_Recv(got.data(), kInts, MPI_INT, 0, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      arrived = true;
    }
    if (!cancelled && !arrived) {
      MPI_Recv(got.data(), kInts, MPI_INT, 0, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      arrived = true;
    }
    EXPECT_EQ(arrived, !cancelled);
    if (arrived) EXPECT_EQ(got, arrived_as(8));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Deferred sends, a blocking send Strider packs and a synchronous one, to one receiver that
// takes them with MPI_ANY_TAG: they arrive in the order they were posted.
TEST(DeferredSends, OrderAcrossTagsAndModes) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  Strided t;
  constexpr int kMessages = 6;
  DeferredCount count(world_rank() == 0 ? 3 : 0);  // the Issend is not deferred
  if (world_rank() == 0) {
    std::vector<std::vector<int>> s;
    for (int k = 0; k < kMessages; ++k) s.push_back(source(k));
    std::vector<MPI_Request> r;
    MPI_Request q;
    MPI_Isend(s[0].data(), 1, t.type, 1, 30, MPI_COMM_WORLD, &q);
    r.push_back(q);
    MPI_Isend(s[1].data(), 1, t.type, 1, 31, MPI_COMM_WORLD, &q);
    r.push_back(q);
    MPI_Send(s[2].data(), 1, t.type, 1, 32, MPI_COMM_WORLD);  // starts the two first
    MPI_Issend(s[3].data(), 1, t.type, 1, 33, MPI_COMM_WORLD, &q);
    r.push_back(q);
    MPI_Isend(s[4].data(), 1, t.type, 1, 34, MPI_COMM_WORLD, &q);
    r.push_back(q);
    MPI_Send(s[5].data(), 1, t.type, 1, 35, MPI_COMM_WORLD);
    ASSERT_EQ(MPI_Waitall(static_cast<int>(r.size()), r.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (MPI_Request& each : r) EXPECT_EQ(each, MPI_REQUEST_NULL);
  } else {
    for (int k = 0; k < kMessages; ++k) {
      std::vector<int> got(kInts, -1);
      MPI_Status st;
      ASSERT_EQ(MPI_Recv(got.data(), kInts, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st),
                MPI_SUCCESS);
      EXPECT_EQ(st.MPI_TAG, 30 + k);
      EXPECT_EQ(got, arrived_as(k)) << "message " << k;
    }
  }
}

// Every completion call leaves a deferred send's request MPI_REQUEST_NULL, as for any
// nonblocking send, and reports its index once.
TEST(DeferredSends, EveryCompletionCallFreesTheRequest) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  Strided t;
  constexpr int kEach = 4, kCalls = 6;
  DeferredCount count(world_rank() == 0 ? kEach * kCalls : 0);
  for (int call = 0; call < kCalls; ++call) {
    if (world_rank() == 0) {
      std::vector<std::vector<int>> s;
      std::vector<MPI_Request> r(kEach);
      for (int k = 0; k < kEach; ++k) s.push_back(source(call * kEach + k));
      for (int k = 0; k < kEach; ++k) {
        ASSERT_EQ(MPI_Isend(s[k].data(), 1, t.type, 1, 40 + k, MPI_COMM_WORLD, &r[k]), MPI_SUCCESS);
      }
      std::vector<int> seen(kEach, 0);
      int left = kEach;
      while (left > 0) {
        int index = MPI_UNDEFINED, flag = 0, outcount = 0;
        std::vector<int> indices(kEach);
        switch (call) {
          case 0:
            ASSERT_EQ(MPI_Waitall(kEach, r.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
            for (int& x : seen) ++x;
            left = 0;
            break;
          case 1:
            ASSERT_EQ(MPI_Testall(kEach, r.data(), &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
            if (flag) {
              for (int& x : seen) ++x;
              left = 0;
            }
            break;
          case 2:
            ASSERT_EQ(MPI_Waitany(kEach, r.data(), &index, MPI_STATUS_IGNORE), MPI_SUCCESS);
            ASSERT_NE(index, MPI_UNDEFINED);
            ++seen[index];
            --left;
            break;
          case 3:
            ASSERT_EQ(MPI_Testany(kEach, r.data(), &index, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
            if (flag && index != MPI_UNDEFINED) {
              ++seen[index];
              --left;
            }
            break;
          case 4:
            ASSERT_EQ(MPI_Waitsome(kEach, r.data(), &outcount, indices.data(), MPI_STATUSES_IGNORE),
                      MPI_SUCCESS);
            for (int k = 0; k < outcount; ++k) ++seen[indices[k]];
            left -= outcount;
            break;
          default:
            for (int k = 0; k < kEach; ++k) {
              if (r[k] == MPI_REQUEST_NULL) continue;
              ASSERT_EQ(MPI_Test(&r[k], &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
              if (flag) {
                ++seen[k];
                --left;
              }
            }
        }
      }
      for (int k = 0; k < kEach; ++k) {
        EXPECT_EQ(r[k], MPI_REQUEST_NULL) << "call " << call;
        EXPECT_EQ(seen[k], 1) << "call " << call;
      }
      // A further Waitany finds nothing active.
      int index = 0;
      ASSERT_EQ(MPI_Waitany(kEach, r.data(), &index, MPI_STATUS_IGNORE), MPI_SUCCESS);
      EXPECT_EQ(index, MPI_UNDEFINED);
    } else {
      for (int k = 0; k < kEach; ++k) {
        std::vector<int> got(kInts, -1);
        MPI_Recv(got.data(), kInts, MPI_INT, 0, 40 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        EXPECT_EQ(got, arrived_as(call * kEach + k));
      }
    }
  }
}

// A deferred send freed by MPI_Request_free still arrives.
TEST(DeferredSends, FreedRequestStillDelivers) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  Strided t;
  DeferredCount count(world_rank() == 0 ? 1 : 0);
  std::vector<int> s = source(5);
  if (world_rank() == 0) {
    MPI_Request r;
    MPI_Isend(s.data(), 1, t.type, 1, 50, MPI_COMM_WORLD, &r);
    ASSERT_EQ(MPI_Request_free(&r), MPI_SUCCESS);
    EXPECT_EQ(r, MPI_REQUEST_NULL);
  } else {
    std::vector<int> got(kInts, -1);
    MPI_Recv(got.data(), kInts, MPI_INT, 0, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT_EQ(got, arrived_as(5));
  }
  MPI_Barrier(MPI_COMM_WORLD);  // the sender's buffer outlives the send
}

// MPI_Cancel of a deferred send: the MPI cancels it or it arrives; the receiver learns which.
TEST(DeferredSends, CancelIsTheMpis) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  Strided t;
  DeferredCount count(world_rank() == 0 ? 1 : 0);
  if (world_rank() == 0) {
    std::vector<int> s = source(6);
    MPI_Request r;
    MPI_Isend(s.data(), 1, t.type, 1, 60, MPI_COMM_WORLD, &r);
    cancel_and_tell(r, 61);
  } else {
    int cancelled = -1;
    MPI_Recv(&cancelled, 1, MPI_INT, 0, 61, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (!cancelled) {
      std::vector<int> got(kInts, -1);
      MPI_Recv(got.data(), kInts, MPI_INT, 0, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      EXPECT_EQ(got, arrived_as(6));
    }
  }
}

// A deferred send into a receive too small: the receiver gets MPI_ERR_TRUNCATE, the sender
// completes without error.
TEST(DeferredSends, TruncationIsTheReceiversError) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  Strided t;
  DeferredCount count(world_rank() == 0 ? 1 : 0);
  if (world_rank() == 0) {
    std::vector<int> s = source(7);
    MPI_Request r;
    MPI_Isend(s.data(), 1, t.type, 1, 70, MPI_COMM_WORLD, &r);
    EXPECT_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
  } else {
    std::vector<int> got(kInts / 2, -1);
    const int rc =
        MPI_Recv(got.data(), kInts / 2, MPI_INT, 0, 70, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int error_class = MPI_SUCCESS;
    MPI_Error_class(rc, &error_class);
    EXPECT_EQ(error_class, MPI_ERR_TRUNCATE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// MPI_Test is prompt: its first call starts the send, so a receiver's blocking receive
// completes while the sender only tests.
TEST(DeferredSends, TestLoopCompletes) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  Strided t;
  DeferredCount count(world_rank() == 0 ? 1 : 0);
  if (world_rank() == 0) {
    std::vector<int> s = source(8);
    MPI_Request r;
    MPI_Isend(s.data(), 1, t.type, 1, 80, MPI_COMM_WORLD, &r);
    int flag = 0;
    while (!flag) ASSERT_EQ(MPI_Test(&r, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    EXPECT_EQ(r, MPI_REQUEST_NULL);
  } else {
    std::vector<int> got(kInts, -1);
    MPI_Recv(got.data(), kInts, MPI_INT, 0, 80, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT_EQ(got, arrived_as(8));
  }
}

// The application may free its type right after MPI_Isend: the deferred pack does not need it.
TEST(DeferredSends, TypeFreedBeforeTheFlush) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  DeferredCount count(world_rank() == 0 ? 1 : 0);
  if (world_rank() == 0) {
    std::vector<int> s = source(9);
    MPI_Datatype type;
    MPI_Type_vector(kInts, 1, 2, MPI_INT, &type);
    MPI_Type_commit(&type);
    MPI_Request r;
    MPI_Isend(s.data(), 1, type, 1, 90, MPI_COMM_WORLD, &r);
    MPI_Type_free(&type);
    EXPECT_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
  } else {
    std::vector<int> got(kInts, -1);
    MPI_Recv(got.data(), kInts, MPI_INT, 0, 90, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT_EQ(got, arrived_as(9));
  }
}

// The request of the send posted by send_from_delete.
MPI_Request callback_send = MPI_REQUEST_NULL;

// An attribute's delete function that sends the attribute (a buffer) to rank 1 as one element of
// the type its extra state points to.
int send_from_delete(MPI_Comm comm, int, void* buffer, void* type) {
  return MPI_Isend(buffer, 1, *static_cast<MPI_Datatype*>(type), 1, 60, comm, &callback_send);
}

// A send posted from a callback the MPI runs inside another call (here an attribute's delete
// function, inside MPI_Comm_delete_attr) is packed and started at once: no flush would come
// before the outer call returns, and a call that blocks after its callbacks ran (a collective
// that copies attributes first) would wait on it.
TEST(DeferredSends, SendFromACallbackIsNotDeferred) {
  if (world_size() != 2) GTEST_SKIP() << "needs 2 ranks";
  Strided t;
  if (world_rank() == 0) {
    std::vector<int> s = source(10);
    int key = MPI_KEYVAL_INVALID;
    ASSERT_EQ(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, send_from_delete, &key, &t.type),
              MPI_SUCCESS);
    ASSERT_EQ(MPI_Comm_set_attr(MPI_COMM_WORLD, key, s.data()), MPI_SUCCESS);
    {
      const DeferredCount none(0);
      ASSERT_EQ(MPI_Comm_delete_attr(MPI_COMM_WORLD, key), MPI_SUCCESS);
    }
    ASSERT_NE(callback_send, MPI_REQUEST_NULL);
    ASSERT_EQ(MPI_Wait(&callback_send, MPI_STATUS_IGNORE), MPI_SUCCESS);
    MPI_Comm_free_keyval(&key);
    // The same send from the application's own code is deferred, as before.
    const DeferredCount one(1);
    MPI_Request r;
    ASSERT_EQ(MPI_Isend(s.data(), 1, t.type, 1, 61, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    ASSERT_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
  } else {
    for (int tag : {60, 61}) {
      std::vector<int> got(kInts, -1);
      MPI_Recv(got.data(), kInts, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      EXPECT_EQ(got, arrived_as(10));
    }
  }
}

}  // namespace
}  // namespace strider::testing
