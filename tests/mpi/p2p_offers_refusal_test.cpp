// A receive the MPI refuses must never have offered anything (docs/same-node-p2p.md, "The
// protocol"): under refusing_tool.cpp the MPI refuses a receive only after its sender has sent,
// and a sender that found an offer for it would have filled it and sent a notice, which the
// stream's next receive (one the MPI fills) would then take: a count of 0 instead of the message.
// For MPI_Irecv, MPI_Recv and MPI_Sendrecv, on 2 ranks with host buffers through Strider's path
// (STRIDER_P2P_HOST=pack); then the stream's next message must still come by its offer (the
// refused receive matched nothing). The same test under the tool alone (no Strider) is the
// control.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <vector>

#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

constexpr int kReceiver = 0, kSender = 1;
constexpr int kCount = 16;

template <class Fn>
Fn tool(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, name));
}

// Message `index` of the stream with tag `tag`.
std::vector<unsigned char> message(int tag, int index) {
  std::vector<unsigned char> bytes(kCount * 8, 0xA5);
  for (int k = 0; k < kCount; ++k) {
    const int v = (tag * 100 + index) * 1000 + k;
    std::memcpy(bytes.data() + k * 8, &v, sizeof v);
  }
  return bytes;
}

enum class Call { Irecv, Recv, Sendrecv };

// The receiver's refused receive, as `call` posts it.
int refused_receive(Call call, int tag, MPI_Comm comm, std::vector<unsigned char>& buffer) {
  MPI_Status status;
  switch (call) {
    case Call::Irecv: {
      MPI_Request request = MPI_REQUEST_NULL;
      return MPI_Irecv(buffer.data(), kCount, strided_int_type(), kSender, tag, comm, &request);
    }
    case Call::Recv:
      return MPI_Recv(buffer.data(), kCount, strided_int_type(), kSender, tag, comm, &status);
    case Call::Sendrecv: {
      int nothing = 0;
      return MPI_Sendrecv(&nothing, 1, MPI_INT, MPI_PROC_NULL, 0, buffer.data(), kCount,
                          strided_int_type(), kSender, tag, comm, &status);
    }
  }
  return MPI_SUCCESS;
}

// Message `index` of the stream, received by a receive the MPI fills.
void receive_by_the_mpi(int tag, MPI_Comm comm, int index) {
  set_p2p_host(false);
  std::vector<unsigned char> got(kCount * 8, 0xA5);
  MPI_Status status;
  ASSERT_EQ(MPI_Recv(got.data(), kCount, strided_int_type(), kSender, tag, comm, &status),
            MPI_SUCCESS);
  int count = -1;
  MPI_Get_count(&status, strided_int_type(), &count);
  EXPECT_EQ(count, kCount) << "the next receive got a notice meant for the refused one";
  EXPECT_EQ(got, message(tag, index));
}

// Message `index` of the stream, received through Strider's path by a receive posted before
// the send (the barrier): it offers, and its data comes by the offer, unless the refusal left
// the stream's count wrong or the ledger untrusted.
void receive_by_offer(int tag, MPI_Comm comm, int index) {
  set_p2p_host(true);
  const int me = world_rank();
  const bool strider = strider_loaded();
  const std::uint64_t used_before = strider ? stats().offers_used : 0;
  std::vector<unsigned char> got(kCount * 8, 0xA5);
  MPI_Request request = MPI_REQUEST_NULL;
  if (me == kReceiver) {
    ASSERT_EQ(MPI_Irecv(got.data(), kCount, strided_int_type(), kSender, tag, comm, &request),
              MPI_SUCCESS);
  }
  MPI_Barrier(comm);
  if (me == kSender) {
    const std::vector<unsigned char> data = message(tag, index);
    ASSERT_EQ(MPI_Send(data.data(), kCount, strided_int_type(), kReceiver, tag, comm), MPI_SUCCESS);
  }
  if (me == kReceiver) {
    MPI_Status status;
    ASSERT_EQ(MPI_Wait(&request, &status), MPI_SUCCESS);
    int count = -1;
    MPI_Get_count(&status, strided_int_type(), &count);
    EXPECT_EQ(count, kCount);
    EXPECT_EQ(got, message(tag, index));
    if (strider) EXPECT_EQ(stats().offers_used, used_before + 1) << "the receive was not offered";
  }
}

// One stream, on a communicator of its own (its own ledgers): the receiver's first receive
// (through Strider's path, so it may offer) is refused after the sender sent message 0; its
// next receive, which the MPI fills, must get message 0. Then message 1 must come by its offer.
void refused_then_received(Call call, int tag) {
  using Arm = void (*)(int, MPI_Comm);
  using Handshake = void (*)(int, MPI_Comm);
  const auto arm = tool<Arm>("refusing_tool_arm");
  const auto await_ready = tool<Handshake>("refusing_tool_await_ready");
  const auto sent = tool<Handshake>("refusing_tool_sent");
  ASSERT_TRUE(arm && await_ready && sent) << "refusing_tool is not preloaded";
  ASSERT_GE(world_size(), 2);
  MPI_Comm comm = MPI_COMM_NULL, side = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &comm), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &side), MPI_SUCCESS);
  const int me = world_rank();
  if (me == kReceiver) {
    set_p2p_host(true);
    arm(tag, side);
    std::vector<unsigned char> refused(kCount * 8, 0xA5);
    const int rc = refused_receive(call, tag, comm, refused);
    int error_class = MPI_SUCCESS;
    MPI_Error_class(rc, &error_class);
    EXPECT_EQ(error_class, MPI_ERR_TAG) << "the tool did not refuse the receive";
    receive_by_the_mpi(tag, comm, 0);
  } else if (me == kSender) {
    set_p2p_host(true);
    const std::vector<unsigned char> data = message(tag, 0);
    await_ready(kReceiver, side);
    ASSERT_EQ(MPI_Send(data.data(), kCount, strided_int_type(), kReceiver, tag, comm), MPI_SUCCESS);
    sent(kReceiver, side);
  }
  MPI_Barrier(comm);
  receive_by_offer(tag, comm, 1);
  set_p2p_host(false);
  MPI_Comm_free(&side);
  MPI_Comm_free(&comm);
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(P2POffersRefusal, RefusedIrecvOffersNothing) { refused_then_received(Call::Irecv, 11); }

TEST(P2POffersRefusal, RefusedRecvOffersNothing) { refused_then_received(Call::Recv, 12); }

TEST(P2POffersRefusal, RefusedSendrecvOffersNothing) { refused_then_received(Call::Sendrecv, 13); }

}  // namespace
}  // namespace strider::testing
