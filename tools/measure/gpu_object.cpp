#include "measure/gpu_object.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <vector>

#include "engine/cuda/gpu_engine.hpp"
#include "model/grid.hpp"
#include "transfer/wire_view.hpp"

namespace strider::measure {

void check_cuda(int rc, const char* what) {
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    throw std::runtime_error(std::string(what) + ": " +
                             cudaGetErrorString(static_cast<cudaError_t>(rc)));
  }
}

void check_mpi(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string(what) + " failed");
}

namespace {

std::int64_t stride_of(const ObjectSpec& s) {
  return static_cast<std::int64_t>(static_cast<double>(s.block) * s.ratio);
}

}  // namespace

BlockList block_list(const ObjectSpec& s) {
  BlockList list;
  const std::int64_t blocks = s.bytes / s.block;
  const std::int64_t jitter = s.block / 2;
  const auto mean_gap = static_cast<std::int64_t>((s.ratio - 1) * static_cast<double>(s.block));
  std::uint64_t state = 0x2545f4914f6cdd1dull;  // xorshift: the same list on every run
  MPI_Aint at = 0;
  for (std::int64_t k = 0; k < blocks; ++k) {
    // Pairs of (block - jitter, block + jitter) keep the total at blocks x block.
    const std::int64_t length = s.block + (k % 2 == 0 ? -jitter : jitter) -
                                (k == blocks - 1 && blocks % 2 == 1 ? -jitter : 0);
    list.lengths.push_back(static_cast<int>(length));
    list.displacements.push_back(at);
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    // Gaps uniform in [1, 2 x mean - 1]; where that range is one value (1-byte blocks at
    // ratio 2) they alternate 1, 2, or the list would be a plain vector.
    const std::int64_t range = 2 * mean_gap - 1;
    const std::int64_t gap =
        range < 2 ? 1 + k % 2
                  : 1 + static_cast<std::int64_t>(state % static_cast<std::uint64_t>(range));
    at += length + gap;
  }
  return list;
}

std::int64_t ObjectSpec::extent() const {
  if (irregular) {
    const BlockList list = block_list(*this);
    return list.displacements.back() + list.lengths.back();
  }
  const std::int64_t blocks = bytes / block;
  const std::int64_t stride = stride_of(*this);
  if (dims == 2) return (blocks - 1) * stride + block;
  const std::int64_t inner = model::grid::inner_count_3d(blocks);
  return (blocks / inner - 1) * 2 * inner * stride + (inner - 1) * stride + block;
}

GpuObject::GpuObject(const ObjectSpec& spec, std::byte* base) : spec_(spec) {
  const std::int64_t blocks = spec.bytes / spec.block;
  const std::int64_t stride = stride_of(spec);
  if (spec.irregular) {
    const BlockList list = block_list(spec);
    check_mpi(MPI_Type_create_hindexed(static_cast<int>(list.lengths.size()), list.lengths.data(),
                                       list.displacements.data(), MPI_BYTE, &type_),
              "MPI_Type_create_hindexed");
  } else if (spec.dims == 2) {
    check_mpi(MPI_Type_create_hvector(static_cast<int>(blocks), static_cast<int>(spec.block),
                                      stride, MPI_BYTE, &type_),
              "MPI_Type_create_hvector");
  } else {
    const std::int64_t inner = model::grid::inner_count_3d(blocks);
    MPI_Datatype row = MPI_DATATYPE_NULL;
    check_mpi(MPI_Type_create_hvector(static_cast<int>(inner), static_cast<int>(spec.block), stride,
                                      MPI_BYTE, &row),
              "MPI_Type_create_hvector");
    check_mpi(MPI_Type_create_hvector(static_cast<int>(blocks / inner), 1, 2 * inner * stride, row,
                                      &type_),
              "MPI_Type_create_hvector");
    MPI_Type_free(&row);
  }
  check_mpi(MPI_Type_commit(&type_), "MPI_Type_commit");
  plan_ = plan::build_plan(type_);
  if (!plan_->supported)
    throw std::runtime_error("no plan for a measurement type: " + plan_->reason);
  view_ = runtime::view_buffer(base, 0);  // classified as the runtime classifies user buffers
}

GpuObject::~GpuObject() {
  if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
}

Allocation Allocation::device(std::size_t bytes) {
  Allocation a;
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, bytes), "cudaMalloc");
  check_cuda(cudaGetDevice(&a.device_), "cudaGetDevice");
  a.data_ = static_cast<std::byte*>(p);
  a.size_ = bytes;
  return a;
}

Allocation Allocation::pinned(std::size_t bytes) {
  Allocation a;
  void* p = nullptr;
  check_cuda(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable),
             "cudaHostAlloc");
  a.data_ = static_cast<std::byte*>(p);
  a.size_ = bytes;
  return a;
}

Allocation::Allocation(Allocation&& o) noexcept
    : data_(o.data_), size_(o.size_), device_(o.device_) {
  o.data_ = nullptr;
}

Allocation& Allocation::operator=(Allocation&& o) noexcept {
  std::swap(data_, o.data_);
  std::swap(size_, o.size_);
  std::swap(device_, o.device_);
  return *this;
}

Allocation::~Allocation() {
  if (data_ == nullptr) return;
  if (device_ >= 0) {
    cudaFree(data_);
  } else {
    cudaFreeHost(data_);
  }
}

void pack(const GpuObject& object, const runtime::BufferView& packed) {
  std::string error;
  if (engine::cuda::pack(object.plan().gpu_layout(), 1, object.view(), packed, {}, error) !=
      engine::cuda::Outcome::Done) {
    throw std::runtime_error("pack: " + error);
  }
}

void unpack(const GpuObject& object, const runtime::BufferView& packed) {
  std::string error;
  if (engine::cuda::unpack(object.plan().gpu_layout(), 1, packed, object.view(), {}, error) !=
      engine::cuda::Outcome::Done) {
    throw std::runtime_error("unpack: " + error);
  }
}

runtime::BufferView wire_view(model::Method method, const Allocation& wire) {
  return transfer::wire_view(wire.on_device() ? ipc::WireMemory::Device : ipc::WireMemory::Pinned,
                             wire.data(), wire.device(), method);
}

void fill_random(std::byte* device_memory, std::size_t bytes, unsigned seed) {
  constexpr std::size_t kChunk = std::size_t{16} << 20;
  std::vector<std::uint32_t> host(kChunk / 4);
  std::mt19937 rng(seed);
  for (auto& v : host) v = rng();
  for (std::size_t at = 0; at < bytes; at += kChunk) {
    check_cuda(cudaMemcpy(device_memory + at, host.data(), std::min(kChunk, bytes - at),
                          cudaMemcpyHostToDevice),
               "cudaMemcpy");
  }
}

}  // namespace strider::measure
