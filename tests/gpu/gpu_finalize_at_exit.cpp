// MPI_Finalize from an atexit handler after Strider moved GPU buffers (the CPU variant:
// tests/mpi/finalize_at_exit.cpp). STRIDER_TEST_ATEXIT=first (the default): the handler is
// registered before MPI_Init and before any CUDA call, so it runs after the CUDA runtime's own exit
// handlers, when the runtime may refuse every call (cudaErrorCudartUnloading); "last": registered
// after the GPU work, so it runs before them. Either way MPI_Finalize must return MPI_SUCCESS,
// without a crash, a hang or an error of Strider's (CTest fails on "] error:"). Before that, the
// data of every call is checked: packed point-to-point with same-node offers, persistent requests,
// a collective and a reduction, all on device memory.
#include <cuda_runtime.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gpu_available.hpp"

namespace {

void finish() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) return;
  const int rc = MPI_Finalize();
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "gpu_finalize_at_exit: MPI_Finalize returned %d\n", rc);
    _exit(3);
  }
}

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "gpu_finalize_at_exit: %s failed (%d)\n", what, rc);
    std::exit(2);
  }
}

void check_cuda(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    std::fprintf(stderr, "gpu_finalize_at_exit: %s: %s\n", what, cudaGetErrorString(rc));
    std::exit(2);
  }
}

// The vector type's 8 ints out of 12 (blocks of 2 every 3): `v` at i if i is in one, else `keep`.
bool holds(const std::vector<int>& got, int v, int keep) {
  for (int i = 0; i < 12; ++i) {
    const int want = i % 3 < 2 ? v + (i / 3) * 2 + i % 3 : keep;
    if (got[i] != want) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const char* when = std::getenv("STRIDER_TEST_ATEXIT");
  const bool first = when == nullptr || std::strcmp(when, "last") != 0;
  if (first) std::atexit(finish);
  check(MPI_Init(&argc, &argv), "MPI_Init");
  if (!strider::testing::gpu_available()) {
    MPI_Finalize();
    return strider::testing::kSkipExitCode;
  }
  int rank = 0, size = 1, devices = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  check_cuda(cudaSetDevice(rank % devices), "cudaSetDevice");
  const int peer = (rank + 1) % size, from = (rank + size - 1) % size;

  // Blocks of 2 ints every 3, its extent 12 ints (one array per gathered rank).
  MPI_Datatype blocks = MPI_DATATYPE_NULL, vec = MPI_DATATYPE_NULL;
  MPI_Type_vector(4, 2, 3, MPI_INT, &blocks);
  MPI_Type_create_resized(blocks, 0, 12 * sizeof(int), &vec);
  MPI_Type_free(&blocks);
  MPI_Type_commit(&vec);
  // The packed 8 ints of `out` are rank*100 + 0..7 (the vector's blocks in order).
  std::vector<int> host(12, -1);
  for (int i = 0; i < 12; ++i) host[i] = i % 3 < 2 ? rank * 100 + (i / 3) * 2 + i % 3 : -7;
  int *out = nullptr, *in = nullptr, *all = nullptr, *sum = nullptr;
  check_cuda(cudaMalloc(&out, 12 * sizeof(int)), "cudaMalloc");
  check_cuda(cudaMalloc(&in, 3 * 12 * sizeof(int)), "cudaMalloc");
  check_cuda(cudaMalloc(&all, static_cast<std::size_t>(12 * size) * sizeof(int)), "cudaMalloc");
  check_cuda(cudaMalloc(&sum, sizeof(int)), "cudaMalloc");
  check_cuda(cudaMemcpy(out, host.data(), 12 * sizeof(int), cudaMemcpyHostToDevice), "copy");
  check_cuda(cudaMemset(in, 0xff, 3 * 12 * sizeof(int)), "cudaMemset");  // -1 everywhere
  check_cuda(cudaMemset(all, 0xff, static_cast<std::size_t>(12 * size) * sizeof(int)), "memset");
  check_cuda(cudaMemcpy(sum, &rank, sizeof(int), cudaMemcpyHostToDevice), "copy");

  check(MPI_Sendrecv(out, 1, vec, peer, 1, in, 1, vec, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Sendrecv");
  MPI_Request r[4];
  MPI_Irecv(in + 12, 1, vec, from, 2, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(out, 1, vec, peer, 2, MPI_COMM_WORLD, &r[1]);
  check(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), "MPI_Waitall");
  MPI_Recv_init(in + 24, 1, vec, from, 3, MPI_COMM_WORLD, &r[2]);
  MPI_Send_init(out, 1, vec, peer, 3, MPI_COMM_WORLD, &r[3]);
  for (int round = 0; round < 2; ++round) {
    check(MPI_Startall(2, &r[2]), "MPI_Startall");
    check(MPI_Waitall(2, &r[2], MPI_STATUSES_IGNORE), "MPI_Waitall (persistent)");
  }
  MPI_Request_free(&r[2]);
  MPI_Request_free(&r[3]);
  check(MPI_Allgather(out, 1, vec, all, 1, vec, MPI_COMM_WORLD), "MPI_Allgather");
  check(MPI_Allreduce(MPI_IN_PLACE, sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  MPI_Type_free(&vec);

  std::vector<int> got(3 * 12), gathered(static_cast<std::size_t>(12 * size));
  int total = 0;
  check_cuda(cudaMemcpy(got.data(), in, got.size() * sizeof(int), cudaMemcpyDeviceToHost), "copy");
  check_cuda(
      cudaMemcpy(gathered.data(), all, gathered.size() * sizeof(int), cudaMemcpyDeviceToHost),
      "copy");
  check_cuda(cudaMemcpy(&total, sum, sizeof(int), cudaMemcpyDeviceToHost), "copy");
  int wrong = total != size * (size - 1) / 2;
  for (int k = 0; k < 3; ++k) {
    wrong |=
        !holds(std::vector<int>(got.begin() + 12 * k, got.begin() + 12 * (k + 1)), from * 100, -1);
  }
  for (int k = 0; k < size; ++k) {
    wrong |= !holds(std::vector<int>(gathered.begin() + 12 * k, gathered.begin() + 12 * (k + 1)),
                    k * 100, -1);
  }
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  // The buffers stay allocated: an application that finalizes at exit need not free them.
  if (!first) std::atexit(finish);
  if (rank == 0) std::printf(wrong ? "gpu_finalize_at_exit: wrong data\n" : " No Errors\n");
  return wrong;  // exit runs finish()
}
