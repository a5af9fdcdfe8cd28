// The offers' ledgers stay bounded over a run that uses a new tag every step
// (offers/stream_table.hpp), and every message stays right. Two ranks, host buffers
// through Strider's path (STRIDER_P2P_HOST=pack). Each step, rank 1 posts its receive for the
// step's message and then tells rank 0 to send it (a one-int message on the same tag), so every
// data message is certain to find its offer, on a stream the ledgers trust. Three phases:
//   new tags counting up: every message comes by its offer, though the ledgers forget streams;
//   tags that come back after they were forgotten: never trusted, so they go by the MPI;
//   new tags again, past all of those: by their offers again.
// STRIDER_TEST_STEPS (default 100000) sets the length; the second phase is a third of it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

constexpr int kCount = 8;
// Per ledger (stream_table.hpp: kStreamsPerTable), and this test's distinct streams per phase
// 2 cycle, well past it.
constexpr std::uint64_t kStreamsPerTable = 4096;
constexpr int kCycle = 6000;

int value(long step, int k) { return static_cast<int>(step * 31 + k); }

// One step on `tag`: rank 0 sends rank 1 a message once rank 1 has posted its receive. False
// (with a failure reported) when rank 1 received wrong data.
bool step(long s, int tag) {
  const int me = world_rank();
  std::vector<unsigned char> bytes(kCount * 8, 0);
  if (me == 0) {
    int go = 0;
    if (MPI_Recv(&go, 1, MPI_INT, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      ADD_FAILURE() << "step " << s;
      return false;
    }
    for (int k = 0; k < kCount; ++k) {
      const int v = value(s, k);
      std::memcpy(bytes.data() + k * 8, &v, sizeof v);
    }
    if (MPI_Send(bytes.data(), kCount, strided_int_type(), 1, tag, MPI_COMM_WORLD) != MPI_SUCCESS) {
      ADD_FAILURE() << "step " << s;
      return false;
    }
  } else if (me == 1) {
    MPI_Request request;
    int go = 1;
    MPI_Status status;
    if (MPI_Irecv(bytes.data(), kCount, strided_int_type(), 0, tag, MPI_COMM_WORLD, &request) !=
            MPI_SUCCESS ||
        MPI_Send(&go, 1, MPI_INT, 0, tag, MPI_COMM_WORLD) != MPI_SUCCESS ||
        MPI_Wait(&request, &status) != MPI_SUCCESS) {
      ADD_FAILURE() << "step " << s;
      return false;
    }
    int count = -1;
    MPI_Get_count(&status, strided_int_type(), &count);
    if (count != kCount) {
      ADD_FAILURE() << "step " << s << " tag " << tag << ": count " << count;
      return false;
    }
    for (int k = 0; k < kCount; ++k) {
      int v = 0;
      std::memcpy(&v, bytes.data() + k * 8, sizeof v);
      if (v != value(s, k)) {
        ADD_FAILURE() << "step " << s << " tag " << tag << " element " << k << ": " << v;
        return false;
      }
    }
  }
  return true;
}

std::uint64_t used() { return strider_loaded() ? stats().offers_used : 0; }

TEST(OffersStreamsSoak, LedgersStayBoundedWithANewTagEveryStep) {
  ASSERT_EQ(world_size(), 2) << "two ranks";
  const long steps = env_long("STRIDER_TEST_STEPS", 100000);
  ASSERT_GE(steps, 3 * kCycle) << "too short to forget and see streams again";
  const long returning = steps / 3, fresh = 1000, counting = steps - returning - fresh;
  const bool strider = strider_loaded();
  const char* same_node = std::getenv("STRIDER_SAME_NODE");
  const bool offers = strider && (same_node == nullptr || std::string(same_node) != "0");
  set_p2p_host(true);
  long s = 0;
  int tag = 1;
  // 1: a new tag every step.
  const std::uint64_t used_0 = used();
  for (long i = 0; i < counting; ++i, ++s) ASSERT_TRUE(step(s, tag++));
  const std::uint64_t used_1 = used();
  // 2: tags over a cycle longer than a ledger holds: each comes back after it was forgotten.
  const int base = tag;
  for (long i = 0; i < returning; ++i, ++s)
    ASSERT_TRUE(step(s, base + static_cast<int>(i % kCycle)));
  tag = base + kCycle;
  const std::uint64_t used_2 = used();
  // 3: new tags again, past every forgotten one.
  for (long i = 0; i < fresh; ++i, ++s) ASSERT_TRUE(step(s, tag++));
  const std::uint64_t used_3 = used();
  set_p2p_host(false);
  if (!strider) return;
  const strider_stats st = stats();
  std::printf("rank %d: offers used %llu, %llu, %llu by phase; streams held %llu, forgotten %llu\n",
              world_rank(), static_cast<unsigned long long>(used_1 - used_0),
              static_cast<unsigned long long>(used_2 - used_1),
              static_cast<unsigned long long>(used_3 - used_2),
              static_cast<unsigned long long>(st.offers_streams),
              static_cast<unsigned long long>(st.offers_streams_forgotten));
  // This process's ledgers on MPI_COMM_WORLD: one for its sends, one for its receives.
  EXPECT_LE(st.offers_streams, 2 * kStreamsPerTable);
  if (!offers) return;
  EXPECT_GT(st.offers_streams_forgotten, 0u);
  if (world_rank() == 1) {  // the data messages' receiver
    EXPECT_EQ(used_1 - used_0, static_cast<std::uint64_t>(counting));
    // Only the first cycle's tags, new then, may have come by their offers.
    EXPECT_LE(used_2 - used_1, static_cast<std::uint64_t>(kCycle));
    EXPECT_EQ(used_3 - used_2, static_cast<std::uint64_t>(fresh));
  }
}

}  // namespace
}  // namespace strider::testing
