// The objects strider-measure times: strided byte blocks in GPU memory, described by an MPI
// datatype (as an application would), planned by Strider, packed by its GPU engine. And the
// wire buffers of each transfer method, as the runtime uses them.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/cost_model.hpp"
#include "plan/plan.hpp"
#include "runtime/memory_kind.hpp"

namespace strider::measure {

// `bytes` packed bytes as blocks of `block` bytes every `block * ratio` bytes: a vector (dims 2)
// or a vector of vectors (dims 3, split as model::grid::inner_count_3d says). Irregular: a
// block list (hindexed, dims 2) with those means: block lengths alternating block -/+ block/2,
// gaps drawn pseudo-randomly around (ratio - 1) x block, never 0 (so blocks never merge).
struct ObjectSpec {
  std::int64_t block = 0;
  std::int64_t bytes = 0;
  double ratio = 2;
  int dims = 2;
  bool irregular = false;
  std::int64_t extent() const;  // bytes of memory the object spans
};

// An irregular spec's blocks: lengths and byte displacements (deterministic).
struct BlockList {
  std::vector<int> lengths;
  std::vector<MPI_Aint> displacements;
};
BlockList block_list(const ObjectSpec& spec);

// Throws std::runtime_error on CUDA or MPI errors.
class GpuObject {
 public:
  // The object at `base` (device memory of at least spec.extent() bytes).
  GpuObject(const ObjectSpec& spec, std::byte* base);
  ~GpuObject();
  GpuObject(const GpuObject&) = delete;
  GpuObject& operator=(const GpuObject&) = delete;

  const plan::Plan& plan() const { return *plan_; }
  const runtime::BufferView& view() const { return view_; }
  std::int64_t bytes() const { return spec_.bytes; }

 private:
  ObjectSpec spec_;
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  std::shared_ptr<const plan::Plan> plan_;
  runtime::BufferView view_;
};

// Memory that lives as long as the measurement: device, or mapped pinned host memory.
class Allocation {
 public:
  static Allocation device(std::size_t bytes);
  static Allocation pinned(std::size_t bytes);
  Allocation() = default;
  Allocation(Allocation&& other) noexcept;
  Allocation& operator=(Allocation&& other) noexcept;
  ~Allocation();
  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool on_device() const { return device_ >= 0; }
  int device() const { return device_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  int device_ = -1;  // -1: pinned host
};

// Packs or unpacks the object through the engine; throws on failure. Synchronous.
void pack(const GpuObject& object, const runtime::BufferView& packed);
void unpack(const GpuObject& object, const runtime::BufferView& packed);

// A transfer method's wire buffer as the runtime presents it to the GPU engine
// (transfer::wire_view): `wire` must be device memory for Device, pinned otherwise.
runtime::BufferView wire_view(model::Method method, const Allocation& wire);

// Fills device memory with pseudo-random bytes (the timings run on random data).
void fill_random(std::byte* device_memory, std::size_t bytes, unsigned seed);

// Seconds of wall time around `f()`.
template <class F>
double seconds_of(F&& f);

void check_cuda(int rc, const char* what);  // throws with the CUDA error text
void check_mpi(int rc, const char* what);   // throws unless rc is MPI_SUCCESS

}  // namespace strider::measure

#include <chrono>

template <class F>
double strider::measure::seconds_of(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
