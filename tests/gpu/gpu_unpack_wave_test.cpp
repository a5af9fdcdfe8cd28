// Arrival waves (docs/bursts.md, transfer/wire.hpp unpack_wave): a burst of GPU receives of a
// strided type completed by one Waitall, Testall loop or Waitsome loop is unpacked by one
// kernel per completion call, and one completed by a loop of Waitany or Wait in the waves of
// earlier calls (calls/early_arrivals.hpp), with the same bytes as one by one: every element of
// every receive right, every gap byte untouched. Run with offers off (STRIDER_SAME_NODE=0: waves
// take receives without an offer), with STRIDER_BURST unset (waves expected) and =0 (none).
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

void check_cuda(cudaError_t rc) { ASSERT_EQ(rc, cudaSuccess) << cudaGetErrorString(rc); }

enum class Completion { Waitall, TestallLoop, WaitsomeLoop, WaitanyLoop, WaitLoop };

class UnpackWaves : public WorldCommTest {
 protected:
  // Rank 0 sends `messages` vectors of ints to rank 1, which receives each into its own slice
  // of one device buffer and completes them with `how`. Returns the waves rank 1 counted.
  std::uint64_t burst(int messages, int blocks, Completion how, std::uint64_t seed) {
    MPI_Datatype column = MPI_DATATYPE_NULL;
    MPI_Type_vector(blocks, 1, 3, MPI_INT, &column);  // one int of every three
    MPI_Type_commit(&column);
    const std::size_t span_ints = static_cast<std::size_t>(3 * (blocks - 1) + 1);
    const std::size_t slice = span_ints + 5;  // slices apart, gaps between them
    const std::size_t total = slice * static_cast<std::size_t>(messages);
    std::mt19937 rng(static_cast<std::uint32_t>(seed));
    std::vector<int> host(total);
    for (int& v : host) v = static_cast<int>(rng());
    int* device = nullptr;
    check_cuda(cudaMalloc(&device, total * sizeof(int)));
    check_cuda(cudaMemcpy(device, host.data(), total * sizeof(int), cudaMemcpyHostToDevice));
    const std::uint64_t before = stats().unpack_waves;
    std::vector<MPI_Request> requests(static_cast<std::size_t>(messages), MPI_REQUEST_NULL);
    if (rank_ == 0) {
      for (int m = 0; m < messages; ++m) {
        EXPECT_EQ(MPI_Isend(device + slice * m, 1, column, 1, m, comm_, &requests[m]), MPI_SUCCESS);
      }
      EXPECT_EQ(MPI_Waitall(messages, requests.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
    } else if (rank_ == 1) {
      for (int m = 0; m < messages; ++m) {
        EXPECT_EQ(MPI_Irecv(device + slice * m, 1, column, 0, m, comm_, &requests[m]), MPI_SUCCESS);
      }
      // Let every message arrive first, so that one completion call sees them all.
      MPI_Barrier(comm_);
      complete(requests, how);
    }
    if (rank_ == 0) MPI_Barrier(comm_);
    if (rank_ > 1) MPI_Barrier(comm_);
    std::vector<int> got(total);
    check_cuda(cudaMemcpy(got.data(), device, total * sizeof(int), cudaMemcpyDeviceToHost));
    cudaFree(device);
    if (rank_ == 1) {
      // Rank 0's values at the vector's elements, rank 1's own everywhere else.
      std::vector<int> sent(total);
      std::mt19937 rng0(static_cast<std::uint32_t>(seed));
      for (int& v : sent) v = static_cast<int>(rng0());
      std::vector<int> expected = host;
      for (int m = 0; m < messages; ++m) {
        for (int b = 0; b < blocks; ++b) {
          const std::size_t at = slice * static_cast<std::size_t>(m) + 3 * b;
          expected[at] = sent[at];
        }
      }
      for (std::size_t i = 0; i < total; ++i) {
        if (got[i] != expected[i]) {
          ADD_FAILURE() << "int " << i << " of " << total << ": " << got[i]
                        << " != " << expected[i];
          break;
        }
      }
    }
    MPI_Type_free(&column);
    return stats().unpack_waves - before;
  }

  static void complete(std::vector<MPI_Request>& requests, Completion how) {
    const int n = static_cast<int>(requests.size());
    switch (how) {
      case Completion::Waitall:
        EXPECT_EQ(MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE), MPI_SUCCESS);
        break;
      case Completion::TestallLoop: {
        int flag = 0;
        while (!flag) {
          ASSERT_EQ(MPI_Testall(n, requests.data(), &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        }
        break;
      }
      case Completion::WaitanyLoop:
        for (int left = n; left > 0; --left) {
          int index = MPI_UNDEFINED;
          MPI_Status status;
          ASSERT_EQ(MPI_Waitany(n, requests.data(), &index, &status), MPI_SUCCESS);
          ASSERT_NE(index, MPI_UNDEFINED);
          EXPECT_EQ(status.MPI_TAG, index);  // message m has tag m
          EXPECT_EQ(status.MPI_SOURCE, 0);
        }
        break;
      case Completion::WaitLoop:
        for (int m = 0; m < n; ++m) {
          MPI_Status status;
          ASSERT_EQ(MPI_Wait(&requests[m], &status), MPI_SUCCESS);
          EXPECT_EQ(status.MPI_TAG, m);
        }
        break;
      case Completion::WaitsomeLoop: {
        int left = n;
        std::vector<int> indices(requests.size());
        while (left > 0) {
          int out = 0;
          ASSERT_EQ(MPI_Waitsome(n, requests.data(), &out, indices.data(), MPI_STATUSES_IGNORE),
                    MPI_SUCCESS);
          ASSERT_NE(out, MPI_UNDEFINED);
          left -= out;
        }
        break;
      }
    }
  }
};

bool bursts_on() { return env_long("STRIDER_BURST", 1) != 0; }

// Whether any rank of `comm` has failed: ranks leave a test's loop together, so that none waits
// in a burst the others have left.
bool any_rank_failed(MPI_Comm comm) {
  int mine = ::testing::Test::HasFailure() ? 1 : 0, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
  return any != 0;
}

// Early arrivals are asked for below MPI_THREAD_MULTIPLE only (calls/early_arrivals.hpp).
bool early_arrivals_on() {
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  return bursts_on() && level != MPI_THREAD_MULTIPLE;
}

TEST_F(UnpackWaves, WaitallUnpacksTheBurstAtOnce) {
  if (size_ < 2) GTEST_SKIP() << "needs two ranks";
  const std::uint64_t waves = burst(24, 100, Completion::Waitall, 11);
  if (rank_ == 1) {
    if (bursts_on())
      EXPECT_EQ(waves, 1u) << "one Waitall, one wave";
    else
      EXPECT_EQ(waves, 0u);
  }
}

TEST_F(UnpackWaves, TestallAndWaitsomeKeepTheBytes) {
  if (size_ < 2) GTEST_SKIP() << "needs two ranks";
  for (const Completion how : {Completion::TestallLoop, Completion::WaitsomeLoop}) {
    for (const int blocks : {1, 7, 4096}) {
      const std::uint64_t waves = burst(9, blocks, how, 100 + blocks);
      if (rank_ == 1 && !bursts_on()) EXPECT_EQ(waves, 0u);
      if (any_rank_failed(comm_)) return;
    }
  }
}

// Waves across completion calls (docs/bursts.md, calls/early_arrivals.hpp): a loop of Waitany or
// Wait over a burst that has arrived unpacks the receives of later calls in an earlier call's
// wave, with the same bytes and statuses. The first burst of each loop leaves the application's
// last completion finishing one receive, so that the second's receives are noted. Under
// MPI_THREAD_MULTIPLE (and with STRIDER_BURST=0) no receive is unpacked early.
TEST_F(UnpackWaves, WaitanyAndWaitLoopsShareWaves) {
  if (size_ < 2) GTEST_SKIP() << "needs two ranks";
  for (const Completion how : {Completion::WaitanyLoop, Completion::WaitLoop}) {
    burst(24, 100, how, 200);
    if (any_rank_failed(comm_)) return;
    const std::uint64_t early = stats().receives_early;
    const std::uint64_t waves = burst(24, 100, how, 201);
    if (rank_ == 1) {
      const std::uint64_t unpacked_early = stats().receives_early - early;
      if (early_arrivals_on()) {
        EXPECT_GT(waves, 0u) << "no call unpacked two or more receives";
        EXPECT_GT(unpacked_early, 0u) << "no receive unpacked early";
      } else {
        EXPECT_EQ(unpacked_early, 0u);
        if (!bursts_on()) EXPECT_EQ(waves, 0u);
      }
    }
    if (any_rank_failed(comm_)) return;
  }
}

}  // namespace
}  // namespace strider::testing
