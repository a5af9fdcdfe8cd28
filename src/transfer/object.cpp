#include "transfer/object.hpp"

#include <algorithm>
#include <atomic>
#include <string>

#include "engine/cpu/pack.hpp"
#include "engine/cuda/gpu_engine.hpp"
#include "runtime/page_residency.hpp"
#include "transfer/engine_choice.hpp"
#include "transfer/next.hpp"
#include "transfer/settings.hpp"
#include "transfer/staged.hpp"
#include "transfer/state.hpp"

namespace strider::transfer {
namespace {

bool host_engine_for(const plan::Plan& p, HostPacking host) {
  return host == HostPacking::Strider ? p.supported : host_engine_serves(p);
}

// Whether managed memory at `buffer` moves as host memory (see view_object).
bool managed_on_host(const std::byte* buffer, const decode::Bounds& bounds, int count) {
  switch (settings().managed) {
    case runtime::ManagedPath::Gpu:
      return false;
    case runtime::ManagedPath::Host:
      return true;
    case runtime::ManagedPath::Auto:
      break;
  }
  const ByteRange span = span_of(bounds, count);
  return runtime::host_resident(buffer + span.lo, static_cast<std::size_t>(span.hi - span.lo));
}

}  // namespace

ByteRange span_of(const decode::Bounds& b, int count) {
  ByteRange r{b.true_lb, b.true_lb + b.true_extent};
  const std::int64_t last = static_cast<std::int64_t>(count > 0 ? count - 1 : 0) * b.extent;
  r.lo = std::min(r.lo, r.lo + last);
  r.hi = std::max(r.hi, r.hi + last);
  return r;
}

bool view_object(const void* buffer, int count, MPI_Datatype type, Object& out) {
  out.plan = plan_for(type);
  // Nothing to move for an empty type (and no first byte to classify).
  if (!out.plan || out.plan->bounds.size == 0) return false;
  const plan::Plan& p = *out.plan;
  // The memory is classified at a byte the object touches: the first packed byte's offset (the
  // MPI's true lb for types Strider does not lay out). MPI_BOTTOM with a relative layout is left
  // to the MPI, which decides what to make of it.
  const std::int64_t probe = p.supported ? p.form.pieces.front().offset : p.bounds.true_lb;
  constexpr std::int64_t kLowestMappedAddress = 4096;
  if (buffer == nullptr && probe < kLowestMappedAddress) return false;
  out.type = type;
  out.count = count;
  out.view = runtime::view_buffer(buffer, probe);
  const bool host_managed = out.view.info.kind == runtime::MemoryKind::Managed &&
                            managed_on_host(out.view.host, p.bounds, count);
  out.gpu = runtime::gpu_resident(out.view.info.kind) && !host_managed;
  return true;
}

Object element_range(const Object& object, int first, int count) {
  Object o = object;
  o.view =
      runtime::shifted(object.view, static_cast<std::int64_t>(first) * object.plan->bounds.extent);
  o.count = count;
  return o;
}

namespace {

// What differs between packing an object and unpacking it: the direction of each engine's and
// the MPI's call, and the counters.
struct PackDirection {
  static constexpr const char* kGpuWhat = "GPU pack";
  using Packed = std::byte*;
  static std::atomic<std::uint64_t>& forwarded() { return counters().packs_forwarded; }
  static std::atomic<std::uint64_t>& host() { return counters().packs_host; }
  static std::atomic<std::uint64_t>& staged() { return counters().packs_staged; }
  static std::atomic<std::uint64_t>& gpu() { return counters().packs_gpu; }
  static int mpi(const Object& o, Packed packed, int bytes, int* position, MPI_Comm comm) {
    return STRIDER_NEXT(MPI_Pack)(o.view.host, o.count, o.type, packed, bytes, position, comm);
  }
  static void cpu(const plan::Plan& p, const Object& o, Packed packed) {
    engine::cpu::pack(p.form, p.bounds.extent, o.count, o.view.host, packed);
  }
  static engine::cuda::Outcome cuda(const plan::Plan& p, const Object& o,
                                    const runtime::BufferView& packed_view, std::string& error) {
    return engine::cuda::pack(p.gpu_layout(), o.count, o.view, packed_view, gpu_policy(), error);
  }
  static int staged_path(const plan::Plan& p, const Object& o, Packed packed,
                         const runtime::BufferView& packed_view, int bytes, int* position,
                         MPI_Comm comm) {
    return staged_pack(STRIDER_NEXT(MPI_Pack), p.bounds, o.view, o.count, o.type, packed,
                       packed_view.info.kind, bytes, position, comm);
  }
};

struct UnpackDirection {
  static constexpr const char* kGpuWhat = "GPU unpack";
  using Packed = const std::byte*;
  static std::atomic<std::uint64_t>& forwarded() { return counters().unpacks_forwarded; }
  static std::atomic<std::uint64_t>& host() { return counters().unpacks_host; }
  static std::atomic<std::uint64_t>& staged() { return counters().unpacks_staged; }
  static std::atomic<std::uint64_t>& gpu() { return counters().unpacks_gpu; }
  static int mpi(const Object& o, Packed packed, int bytes, int* position, MPI_Comm comm) {
    return STRIDER_NEXT(MPI_Unpack)(packed, bytes, position, o.view.host, o.count, o.type, comm);
  }
  static void cpu(const plan::Plan& p, const Object& o, Packed packed) {
    engine::cpu::unpack(p.form, p.bounds.extent, o.count, packed, o.view.host);
  }
  static engine::cuda::Outcome cuda(const plan::Plan& p, const Object& o,
                                    const runtime::BufferView& packed_view, std::string& error) {
    return engine::cuda::unpack(p.gpu_layout(), o.count, packed_view, o.view, gpu_policy(), error);
  }
  static int staged_path(const plan::Plan& p, const Object& o, Packed packed,
                         const runtime::BufferView& packed_view, int bytes, int* position,
                         MPI_Comm comm) {
    return staged_unpack(STRIDER_NEXT(MPI_Unpack), p.bounds, packed, packed_view.info.kind, bytes,
                         position, o.view, o.count, o.type, comm);
  }
};

// Host objects (with host packed bytes) by the host engine, or the MPI where it lays the type
// out; anything GPU-resident by the GPU engine, or staged through host memory.
template <class Direction>
int move_object(const Object& object, typename Direction::Packed packed,
                const runtime::BufferView& packed_view, HostPacking host, MPI_Comm comm) {
  const plan::Plan& p = *object.plan;
  const int bytes = static_cast<int>(object.bytes());
  const bool gpu = object.gpu || runtime::gpu_resident(packed_view.info.kind);
  int position = 0;
  if (!gpu) {
    if (!host_engine_for(p, host)) {
      Direction::forwarded()++;
      return Direction::mpi(object, packed, bytes, &position, comm);
    }
    Direction::cpu(p, object, packed);
    Direction::host()++;
    return MPI_SUCCESS;
  }
  std::string error;
  const auto outcome = gpu_engine_serves(p) ? Direction::cuda(p, object, packed_view, error)
                                            : engine::cuda::Outcome::Fallback;
  if (outcome == engine::cuda::Outcome::Failed) {
    return report_error(comm, Direction::kGpuWhat, error);
  }
  if (outcome == engine::cuda::Outcome::Fallback) {
    Direction::staged()++;
    return Direction::staged_path(p, object, packed, packed_view, bytes, &position, comm);
  }
  Direction::gpu()++;
  return MPI_SUCCESS;
}

}  // namespace

int pack_object(const Object& object, std::byte* packed, const runtime::BufferView& packed_view,
                HostPacking host, MPI_Comm comm) {
  return move_object<PackDirection>(object, packed, packed_view, host, comm);
}

int unpack_object(const Object& object, const std::byte* packed,
                  const runtime::BufferView& packed_view, HostPacking host, MPI_Comm comm) {
  return move_object<UnpackDirection>(object, packed, packed_view, host, comm);
}

}  // namespace strider::transfer
