// The batch kernel: each block finds its job once, stages the job's two address maps in shared
// memory, then runs the copy loop of the job's word size over the job's own virtual grid.
#include <cuda_runtime.h>

#include "engine/cuda/batch.hpp"
#include "engine/cuda/batch_offset.hpp"
#include "engine/cuda/device_tables.hpp"
#include "engine/cuda/kernels.cuh"

namespace strider::engine::cuda {
namespace {

template <int W, class Div>
__device__ __forceinline__ void run_job(const BatchJob& job, const std::byte* from,
                                        const std::byte* to) {
  using Index = typename IndexOf<Div>::type;
  const Index first = static_cast<Index>(blockIdx.x - job.first_block) * blockDim.x + threadIdx.x;
  const Index step = static_cast<Index>(job.blocks) * blockDim.x;
  copy_words<W>(
      first, step, static_cast<Index>(job.words),
      [&](Index p) { return map_address<W, Div>(from, p); },
      [&](Index p) { return map_address<W, Div>(to, p); });
}

template <class Div>
__global__ void __launch_bounds__(Policy::kThreads)
    batch_kernel(const std::byte* table, int njobs, const Completion done) {
  constexpr std::size_t kRecordWords = kMaxMapRecordBytes<Div> / 8;
  __shared__ int job_index;
  __shared__ std::uint64_t maps[2][kRecordWords];
  const BatchJob* jobs = reinterpret_cast<const BatchJob*>(table);
  if (threadIdx.x == 0) job_index = find_job(jobs, njobs, blockIdx.x);
  __syncthreads();
  const BatchJob job = jobs[job_index];
  const auto* from = reinterpret_cast<const std::uint64_t*>(table + job.from);
  const auto* to = reinterpret_cast<const std::uint64_t*>(table + job.to);
  for (unsigned i = threadIdx.x; i < 2 * kRecordWords; i += blockDim.x) {
    // Records are 8-byte multiples; a shorter one's tail is never read (its kind says so).
    const bool second = i >= kRecordWords;
    const unsigned k = second ? i - kRecordWords : i;
    const std::uint64_t* record = second ? to : from;
    const MapKind kind = reinterpret_cast<const MapHead*>(record)->kind;
    if (k < map_record_bytes<Div>(kind) / 8) maps[second][k] = record[k];
  }
  __syncthreads();
  const auto* from_map = reinterpret_cast<const std::byte*>(maps[0]);
  const auto* to_map = reinterpret_cast<const std::byte*>(maps[1]);
  switch (job.word) {
    case 16:
      run_job<16, Div>(job, from_map, to_map);
      break;
    case 8:
      run_job<8, Div>(job, from_map, to_map);
      break;
    case 4:
      run_job<4, Div>(job, from_map, to_map);
      break;
    case 2:
      run_job<2, Div>(job, from_map, to_map);
      break;
    default:
      run_job<1, Div>(job, from_map, to_map);
      break;
  }
  signal_done(done);
}

// Fills in the device tables of the batch's block lists.
cudaError_t upload_tables(BatchShape& shape, const Queue& queue) {
  for (CopyShape& c : shape.copies) {
    for (SideShape* side : {&c.from, &c.to}) {
      if (side->kind != MapKind::List) continue;
      if (side->state == nullptr) return cudaErrorInvalidValue;
      const void* table = nullptr;
      if (const cudaError_t rc =
              list_table_on(*side->form, *side->state, queue, c.word, shape.wide, &table)) {
        return rc;
      }
      side->table = static_cast<const std::byte*>(table);
    }
  }
  return cudaSuccess;
}

}  // namespace

std::size_t batch_memory_bytes(std::size_t copies) { return batch_table_bound(copies); }

cudaError_t launch_batch(const BatchPlan& plan, const std::byte* table, cudaStream_t stream,
                         const Completion& done) {
  if (plan.grid == 0) return cudaSuccess;
  if (plan.wide) {
    batch_kernel<Divmod64><<<plan.grid, Policy::kThreads, 0, stream>>>(table, plan.jobs, done);
  } else {
    batch_kernel<FastDivmod32><<<plan.grid, Policy::kThreads, 0, stream>>>(table, plan.jobs, done);
  }
  return cudaGetLastError();
}

cudaError_t enqueue_batch(Span<const BatchCopy> copies, const Queue& queue, BatchMemory memory,
                          const Policy& policy, bool* signalled) {
  if (signalled) *signalled = false;
  BatchShape shape;
  switch (shape_batch(copies, policy.max_word, shape)) {
    case BatchStatus::NotSupported:
      return cudaErrorNotSupported;
    case BatchStatus::SizeMismatch:
      return cudaErrorInvalidValue;
    case BatchStatus::Ok:
      break;
  }
  if (shape.copies.empty()) return cudaSuccess;
  if (memory.bytes < batch_table_bytes(shape)) return cudaErrorInvalidValue;
  if (const cudaError_t rc = upload_tables(shape, queue)) return rc;
  const BatchPlan plan =
      plan_batch(shape, queue.multiprocessors, Span<std::byte>(memory.host, memory.bytes));
  if (const cudaError_t rc = cudaMemcpyAsync(memory.device, memory.host, plan.bytes,
                                             cudaMemcpyHostToDevice, queue.stream)) {
    return rc;
  }
  if (const cudaError_t rc = launch_batch(plan, memory.device, queue.stream, queue.done)) return rc;
  if (signalled) *signalled = queue.done.flag != nullptr;
  return cudaSuccess;
}

}  // namespace strider::engine::cuda
