// Truncated messages to self (transfer/wire_shape.hpp). Open MPI 4.1.4 truncates a contiguous
// message a process sends to itself silently (no MPI_ERR_TRUNCATE) into a smaller receive posted
// before it, and writes it whole past a smaller receive posted after it; a non-contiguous send
// is bounded and reported. The application's sends here are non-contiguous (one byte every two),
// so the MPI alone gets them right (the forwarded control), and Strider's packed send of the
// same message must keep them so. Each rank sends messages of 2 B to 400,000 B to itself, into
// 8- and 1-byte receives posted before and after the send, received by the MPI or by Strider,
// and checks MPI_ERR_TRUNCATE, the envelope, and that nothing past the receive was written.
//
// Runs with p2p_truncation_test.cpp: forwarded (all to the MPI), packed (host buffers through
// Strider; receives by both, toggled by strider_set_p2p_host) and over GPU memory (tests/gpu:
// sends from GPU memory into GPU receives and host receives the MPI fills).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"
#include "p2p_buffers.hpp"

namespace strider::testing {
namespace {

using Bytes = std::vector<unsigned char>;

constexpr std::size_t kGuard = 4096;
constexpr unsigned char kCanary = 0xA5;
constexpr int kTag = 5;

unsigned char pattern(std::size_t i) { return static_cast<unsigned char>(i * 11 + 1); }

// A receive the MPI fills, or one Strider finishes: GPU memory in the GPU build, host memory
// through Strider's path (strider_set_p2p_host) in the host build's packed run.
Placement& receive_memory(bool strider) {
#ifdef STRIDER_P2P_TEST_GPU
  return strider ? placement(Role::kRecv) : host_placement();
#else
  using Fn = int (*)(int);
  static auto set_p2p_host = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "strider_set_p2p_host"));
  const char* host = std::getenv("STRIDER_P2P_HOST");
  const bool packed_run = host != nullptr && std::strcmp(host, "pack") == 0;
  if (set_p2p_host) set_p2p_host(packed_run && strider ? 1 : 0);
  return host_placement();
#endif
}

// Sends go by the run's own setting (packed in the packed run, GPU memory in the GPU build).
Placement& send_memory() {
#ifndef STRIDER_P2P_TEST_GPU
  receive_memory(true);  // restores STRIDER_P2P_HOST's choice for the send
#endif
  return placement(Role::kSend);
}

class SelfTruncation : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef STRIDER_P2P_TEST_GPU
    if (!strider_loaded()) GTEST_FAIL() << "GPU buffers need libstrider preloaded";
#endif
    ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), MPI_SUCCESS);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Type_create_resized(MPI_BYTE, 0, 2, &every_other_);
    MPI_Type_commit(&every_other_);
  }
  void TearDown() override {
    if (every_other_ != MPI_DATATYPE_NULL) MPI_Type_free(&every_other_);
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    receive_memory(true);
  }

  // One message of `message` bytes to self into a `capacity`-byte receive.
  void round(std::size_t message, int capacity, bool posted_first, bool strider_receives) {
    const std::string what = std::to_string(message) + "-byte message to self, " +
                             std::to_string(capacity) + "-byte receive posted " +
                             (posted_first ? "before" : "after") + " the send, filled by " +
                             (strider_receives ? "Strider" : "the MPI");
    Bytes source(2 * message, 0);
    for (std::size_t i = 0; i < message; ++i) source[2 * i] = pattern(i);
    PlacedBuffer send(send_memory(), source, 0);
    const Bytes initial(static_cast<std::size_t>(capacity) + 2 * kGuard, kCanary);
    PlacedBuffer recv(receive_memory(strider_receives), initial,
                      static_cast<std::ptrdiff_t>(kGuard));
    const int me = world_rank(), n = static_cast<int>(message);
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Status st{};
    int rc = MPI_SUCCESS;
    if (posted_first) {
      ASSERT_EQ(MPI_Irecv(recv.origin(), capacity, MPI_BYTE, me, kTag, comm_, &request),
                MPI_SUCCESS)
          << what;
      send_memory();
      EXPECT_EQ(MPI_Send(send.origin(), n, every_other_, me, kTag, comm_), MPI_SUCCESS) << what;
      rc = MPI_Wait(&request, &st);
    } else {
      ASSERT_EQ(MPI_Isend(send.origin(), n, every_other_, me, kTag, comm_, &request), MPI_SUCCESS)
          << what;
      receive_memory(strider_receives);
      rc = MPI_Recv(recv.origin(), capacity, MPI_BYTE, me, kTag, comm_, &st);
      EXPECT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS) << what;
    }
    EXPECT_EQ(error_class(rc), MPI_ERR_TRUNCATE) << what << " (rc " << rc << ")";
    EXPECT_EQ(st.MPI_SOURCE, me) << what;
    EXPECT_EQ(st.MPI_TAG, kTag) << what;
    // The receive holds the message's first bytes or nothing; the guards keep their canary.
    const Bytes got = recv.read();
    Bytes want = initial;
    if (got[kGuard] != kCanary) {
      for (int i = 0; i < capacity; ++i) want[kGuard + i] = pattern(static_cast<std::size_t>(i));
    }
    std::size_t first_bad = got.size();
    for (std::size_t i = 0; i < got.size() && first_bad == got.size(); ++i) {
      if (got[i] != want[i]) first_bad = i;
    }
    EXPECT_EQ(first_bad, got.size())
        << what << ": byte " << static_cast<long>(first_bad) - static_cast<long>(kGuard)
        << " from the receive's start differs";
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Datatype every_other_ = MPI_DATATYPE_NULL;
};

TEST_F(SelfTruncation, ReportedAndBounded) {
  for (const std::size_t message :
       {std::size_t{2}, std::size_t{64}, std::size_t{4096}, std::size_t{400000}}) {
    for (const int capacity : {8, 1}) {
      if (message <= static_cast<std::size_t>(capacity)) continue;
      for (const bool posted_first : {true, false}) {
        for (const bool strider_receives : {true, false}) {
          round(message, capacity, posted_first, strider_receives);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

}  // namespace
}  // namespace strider::testing
