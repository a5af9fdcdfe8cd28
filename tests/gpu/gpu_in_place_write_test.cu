// Same-node point-to-point writes in place (docs/same-node-p2p.md): a sender writes a GPU
// receive buffer straight in the receiver's layout only where nothing the receiver queued on the
// legacy default stream is pending, since the sender's kernel is not ordered after that work (an
// unpack on Strider's stream would be). Each round the receiver queues a slow kernel on the
// default stream that then writes stale values over its receive buffer, posts a receive of a
// strided type without synchronizing, and the sender sends once the receive is posted: the
// receiver must end with the message (the unpack ordered after the kernel), never the stale
// values. In rounds where the receiver synchronized first, the message must have been written
// in place (the path is taken, not only avoided), and no call leaves a CUDA error behind (a busy
// stream's cudaErrorNotReady). Both directions, both ranks one node.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "late_fill.cuh"
#include "strider/strider.h"

namespace {

int value(int round, long i) { return round * 1000003 + static_cast<int>(i) + 1; }

strider_stats stats() {
  strider_stats s{};
  auto* get = reinterpret_cast<int (*)(strider_stats*, size_t)>(
      dlsym(RTLD_DEFAULT, "strider_get_stats_sized"));
  if (get) get(&s, sizeof s);
  return s;
}

TEST(InPlaceWrite, WritesInPlaceOnlyAfterTheReceiversDefaultStreamIsDone) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ASSERT_EQ(size, 2) << "two ranks";
  ASSERT_NE(dlsym(RTLD_DEFAULT, "strider_get_stats_sized"), nullptr) << "libstrider is not loaded";
  // The message: the first half of every 128 ints (blocks of 256 bytes, written in place across
  // two GPUs too: ipc::DirectPolicy::kMinBlockAcrossGpus is far below).
  constexpr long kInts = 1 << 18, kBlock = 64;
  int *send = nullptr, *recv = nullptr;
  ASSERT_EQ(cudaMalloc(&send, kInts * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&recv, kInts * sizeof(int)), cudaSuccess);
  MPI_Datatype half_blocks;
  MPI_Type_vector(static_cast<int>(kInts / (2 * kBlock)), kBlock, 2 * kBlock, MPI_INT,
                  &half_blocks);
  MPI_Type_commit(&half_blocks);
  std::vector<int> host(static_cast<std::size_t>(kInts));
  long written_in_place = 0, idle_rounds = 0;
  for (int round = 0; round < 16; ++round) {
    const int receiver = round % 2;
    const bool busy = round % 4 < 2;  // the receiver's default stream still busy at the post
    if (rank == receiver) {
      ASSERT_EQ(cudaMemset(recv, 0, kInts * sizeof(int)), cudaSuccess);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      if (busy) {
        late_fill<<<64, 256>>>(recv, kInts, -7, 0, 20'000'000);  // ~10 ms
        ASSERT_EQ(cudaGetLastError(), cudaSuccess);
      }
      const strider_stats before = stats();
      MPI_Request request;
      ASSERT_EQ(MPI_Irecv(recv, 1, half_blocks, 1 - rank, round, MPI_COMM_WORLD, &request),
                MPI_SUCCESS);
      // Asking whether the default stream is idle leaves no error behind for the application.
      EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "round " << round;
      MPI_Barrier(MPI_COMM_WORLD);  // the receive (and its offer) is posted
      MPI_Status status;
      ASSERT_EQ(MPI_Wait(&request, &status), MPI_SUCCESS);
      int count = 0;
      MPI_Get_count(&status, half_blocks, &count);
      EXPECT_EQ(count, 1);
      written_in_place += static_cast<long>(stats().offers_in_place - before.offers_in_place);
      idle_rounds += busy ? 0 : 1;
      // Ordered after the late fill (the legacy default stream).
      ASSERT_EQ(cudaMemcpy(host.data(), recv, kInts * sizeof(int), cudaMemcpyDeviceToHost),
                cudaSuccess);
      long wrong = 0, gaps = 0;
      for (long i = 0; i < kInts; ++i) {
        if (i % (2 * kBlock) < kBlock) {
          wrong += host[static_cast<std::size_t>(i)] != value(round, i);
        } else {
          gaps += host[static_cast<std::size_t>(i)] != (busy ? -7 : 0);
        }
      }
      EXPECT_EQ(wrong, 0) << "round " << round << (busy ? " (default stream busy)" : "");
      EXPECT_EQ(gaps, 0) << "round " << round << ": bytes outside the type were written";
    } else {
      for (long i = 0; i < kInts; ++i) host[static_cast<std::size_t>(i)] = value(round, i);
      ASSERT_EQ(cudaMemcpy(send, host.data(), kInts * sizeof(int), cudaMemcpyHostToDevice),
                cudaSuccess);
      MPI_Barrier(MPI_COMM_WORLD);
      ASSERT_EQ(MPI_Send(send, 1, half_blocks, receiver, round, MPI_COMM_WORLD), MPI_SUCCESS);
    }
  }
  std::printf("[rank %d] receives written in place: %ld of %ld with an idle default stream\n", rank,
              written_in_place, idle_rounds);
  // Offers on (the default), cudaMalloc memory, a message of the receive's size.
  EXPECT_EQ(written_in_place, idle_rounds);
  MPI_Type_free(&half_blocks);
  cudaFree(send);
  cudaFree(recv);
}

// The receiver's description of its buffer for writes in place is kept per (address, type,
// count) and used again only while the allocation is the same one (transfer/direct_object.hpp):
// a receive buffer freed and allocated again, often at the same address and of another size,
// must be described anew, or the sender would write through the old allocation's handle. Each
// round the receiver allocates its buffer afresh, receives in place, checks every int and frees
// it.
TEST(InPlaceWrite, AReallocatedReceiveBufferIsDescribedAnew) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  ASSERT_EQ(size, 2) << "two ranks";
  constexpr long kInts = 1 << 16, kBlock = 64;
  MPI_Datatype half_blocks;
  MPI_Type_vector(static_cast<int>(kInts / (2 * kBlock)), kBlock, 2 * kBlock, MPI_INT,
                  &half_blocks);
  MPI_Type_commit(&half_blocks);
  int* send = nullptr;
  ASSERT_EQ(cudaMalloc(&send, kInts * sizeof(int)), cudaSuccess);
  std::vector<int> host(static_cast<std::size_t>(kInts));
  const int* last = nullptr;
  long reused = 0, written_in_place = 0;
  constexpr int kRounds = 12;
  for (int round = 0; round < kRounds; ++round) {
    if (rank == 0) {
      int* recv = nullptr;
      // Every other round a larger allocation: the same address may come back with another size.
      const long ints = kInts + (round % 2) * kInts;
      ASSERT_EQ(cudaMalloc(&recv, ints * sizeof(int)), cudaSuccess);
      ASSERT_EQ(cudaMemset(recv, 0, ints * sizeof(int)), cudaSuccess);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const bool same_address = recv == last;
      reused += same_address ? 1 : 0;
      last = recv;
      const strider_stats before = stats();
      MPI_Request request;
      ASSERT_EQ(MPI_Irecv(recv, 1, half_blocks, 1, round, MPI_COMM_WORLD, &request), MPI_SUCCESS);
      MPI_Barrier(MPI_COMM_WORLD);  // the receive (and its offer) is posted
      ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
      written_in_place += static_cast<long>(stats().offers_in_place - before.offers_in_place);
      ASSERT_EQ(cudaMemcpy(host.data(), recv, kInts * sizeof(int), cudaMemcpyDeviceToHost),
                cudaSuccess);
      long wrong = 0;
      for (long i = 0; i < kInts; ++i) {
        const int want = i % (2 * kBlock) < kBlock ? value(round, i) : 0;
        wrong += host[static_cast<std::size_t>(i)] != want;
      }
      EXPECT_EQ(wrong, 0) << "round " << round << (same_address ? " (the last address)" : "");
      ASSERT_EQ(cudaFree(recv), cudaSuccess);
    } else {
      for (long i = 0; i < kInts; ++i) host[static_cast<std::size_t>(i)] = value(round, i);
      ASSERT_EQ(cudaMemcpy(send, host.data(), kInts * sizeof(int), cudaMemcpyHostToDevice),
                cudaSuccess);
      MPI_Barrier(MPI_COMM_WORLD);
      ASSERT_EQ(MPI_Send(send, 1, half_blocks, 0, round, MPI_COMM_WORLD), MPI_SUCCESS);
    }
  }
  if (rank == 0) {
    std::printf("[rank 0] %ld of %d rounds reused the last address; %ld written in place\n", reused,
                kRounds - 1, written_in_place);
    // The path under test is taken: the receives were written in place.
    EXPECT_EQ(written_in_place, kRounds);
  }
  MPI_Type_free(&half_blocks);
  cudaFree(send);
}

}  // namespace
