#include "measure/peer_measure.hpp"

#include <cuda_runtime.h>
#include <mpi.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "measure/gpu_object.hpp"
#include "measure/peer_copy.hpp"
#include "model/grid.hpp"

namespace strider::measure {
namespace {

constexpr unsigned kSeed = 11;

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

struct Export {
  int ok = 0;
  cudaIpcMemHandle_t handle{};
};

// Rank 1: whether `target` holds what rank 0's source held (the largest copy covered it all).
bool landed_whole(const Allocation& target) {
  Allocation expected = Allocation::device(target.size());
  fill_random(expected.data(), expected.size(), kSeed);
  std::vector<std::byte> got(target.size()), want(target.size());
  check_cuda(cudaMemcpy(got.data(), target.data(), got.size(), cudaMemcpyDeviceToHost),
             "cudaMemcpy");
  check_cuda(cudaMemcpy(want.data(), expected.data(), want.size(), cudaMemcpyDeviceToHost),
             "cudaMemcpy");
  return std::memcmp(got.data(), want.data(), got.size()) == 0;
}

}  // namespace

double peer_write_weight() {
  double w = 0;
  for (double s : model::grid::transfer_bytes()) w += weight_of(s);
  return w;
}

std::optional<model::Table1D> measure_peer_write(const RepeatLimits& limits,
                                                 const Advance& advance) {
  const auto sizes = model::grid::transfer_bytes();
  const auto largest = static_cast<std::size_t>(sizes.back());
  const int me = world_rank();
  Export exported;
  Allocation target;  // rank 1: the memory rank 0 writes into
  if (me == 1) {
    target = Allocation::device(largest);
    exported.ok = cudaIpcGetMemHandle(&exported.handle, target.data()) == cudaSuccess;
    cudaGetLastError();  // a refused export is an answer, not an error to carry on
  }
  check_mpi(MPI_Bcast(&exported, sizeof exported, MPI_BYTE, 1, MPI_COMM_WORLD), "MPI_Bcast");

  std::optional<model::Table1D> table;
  int mapped = 0;
  if (me == 0 && exported.ok) {
    void* peer = nullptr;
    if (cudaIpcOpenMemHandle(&peer, exported.handle, cudaIpcMemLazyEnablePeerAccess) ==
        cudaSuccess) {
      mapped = 1;
      Allocation source = Allocation::device(largest);
      fill_random(source.data(), largest, kSeed);
      cudaStream_t stream = nullptr;
      check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
      table.emplace();
      for (double s : sizes) {
        const auto bytes = static_cast<std::size_t>(s);
        table->x.push_back(s);
        table->y.push_back(repeat_median(
            [&] {
              return seconds_of([&] {
                check_cuda(copy_and_wait(peer, source.data(), bytes, stream), "peer copy");
              });
            },
            limits));
        advance(weight_of(s), "writes into peer memory");
      }
      check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
      check_cuda(cudaIpcCloseMemHandle(peer), "cudaIpcCloseMemHandle");
    } else {
      cudaGetLastError();
    }
  }
  check_mpi(MPI_Bcast(&mapped, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  int correct = 1;
  if (me == 1 && mapped) correct = landed_whole(target) ? 1 : 0;
  check_mpi(MPI_Bcast(&correct, 1, MPI_INT, 1, MPI_COMM_WORLD), "MPI_Bcast");
  if (!correct)
    throw std::runtime_error("writes into peer memory over CUDA IPC landed wrong bytes");
  if (!mapped) advance(peer_write_weight(), "writes into peer memory (no CUDA IPC)");
  return table;
}

}  // namespace strider::measure
