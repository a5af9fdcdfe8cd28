// Same-node collectives reading pieces in place must see what the application queued on the
// legacy default stream before the call, as a pack on Strider's stream would (a peer's kernel
// is not ordered after this process's work). Each round, every rank queues a slow kernel on
// the default stream that then writes this round's values into its send buffer, and calls
// MPI_Alltoall (and MPI_Alltoallv with a strided type) without synchronizing; each receiver
// checks it got this round's values, not the last round's. With two ranks time-slicing one
// GPU this passed even without the wait (2026-11-25, H100: the contexts happened to be ordered);
// across two GPUs nothing orders a peer's kernel after this process's queued work.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "late_fill.cuh"
#include "strider/strider.h"

namespace {

int value(int round, int rank, long i) {
  return round * 1000003 + rank * 100003 + static_cast<int>(i);
}

TEST(InPlaceOrder, ReadersSeeWorkQueuedOnTheDefaultStreamBeforeTheCall) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  constexpr long kPerPeer = 1 << 16;  // ints per peer
  const long n = kPerPeer * size;
  int *send = nullptr, *recv = nullptr;
  ASSERT_EQ(cudaMalloc(&send, n * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&recv, n * sizeof(int)), cudaSuccess);
  // Every other int, as a strided type (a vector of 1-int blocks every 2 ints).
  MPI_Datatype every_other;
  MPI_Type_vector(static_cast<int>(kPerPeer / 2), 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  std::vector<int> got(static_cast<std::size_t>(n));
  for (int round = 0; round < 8; ++round) {
    for (bool strided : {false, true}) {
      ASSERT_EQ(cudaMemset(recv, 0xff, n * sizeof(int)), cudaSuccess);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      late_fill<<<64, 256>>>(send, n, value(round, rank, 0), 1, 20'000'000);  // ~10 ms
      ASSERT_EQ(cudaGetLastError(), cudaSuccess);
      if (!strided) {
        ASSERT_EQ(MPI_Alltoall(send, static_cast<int>(kPerPeer), MPI_INT, recv,
                               static_cast<int>(kPerPeer), MPI_INT, MPI_COMM_WORLD),
                  MPI_SUCCESS);
      } else {
        std::vector<int> counts(size, 1), rcounts(size, static_cast<int>(kPerPeer / 2));
        // Alltoallw: byte displacements, the strided type on the send side.
        std::vector<int> sbytes(size), rbytes(size);
        std::vector<MPI_Datatype> stypes(size, every_other), rtypes(size, MPI_INT);
        for (int j = 0; j < size; ++j) {
          sbytes[j] = static_cast<int>(j * kPerPeer * sizeof(int));
          rbytes[j] = static_cast<int>(j * kPerPeer * sizeof(int));
        }
        ASSERT_EQ(MPI_Alltoallw(send, counts.data(), sbytes.data(), stypes.data(), recv,
                                rcounts.data(), rbytes.data(), rtypes.data(), MPI_COMM_WORLD),
                  MPI_SUCCESS);
      }
      ASSERT_EQ(cudaMemcpy(got.data(), recv, n * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
      long wrong = 0;
      for (int j = 0; j < size; ++j) {
        // Peer j's ints for this rank: [rank * kPerPeer, ...), every other one when strided.
        const long count = strided ? kPerPeer / 2 : kPerPeer;
        for (long i = 0; i < count; ++i) {
          const int want = value(round, j, rank * kPerPeer + (strided ? 2 * i : i));
          wrong += got[static_cast<std::size_t>(j * kPerPeer + i)] != want;
        }
      }
      EXPECT_EQ(wrong, 0) << "round " << round << (strided ? " strided" : " contiguous");
    }
  }
  // The contiguous pieces at least were read in place (Strider preloaded, one node), on one GPU
  // or across two: they are one 256 KiB block each.
  strider_stats s{};
  auto* get = reinterpret_cast<int (*)(strider_stats*, size_t)>(
      dlsym(RTLD_DEFAULT, "strider_get_stats_sized"));
  ASSERT_NE(get, nullptr) << "libstrider is not loaded";
  get(&s, sizeof s);
  std::printf("[rank %d] pieces read in place %llu\n", rank,
              static_cast<unsigned long long>(s.collective_pieces_in_place));
  EXPECT_GT(s.collective_pieces_in_place, 0u);
  MPI_Type_free(&every_other);
  cudaFree(send);
  cudaFree(recv);
}

}  // namespace
