#include "transfer/object.hpp"

#include <algorithm>
#include <string>

#include "engine/cpu/pack.hpp"
#include "engine/cuda/gpu_engine.hpp"
#include "runtime/config.hpp"
#include "runtime/page_residency.hpp"
#include "transfer/engine_choice.hpp"
#include "transfer/next.hpp"
#include "transfer/staged.hpp"
#include "transfer/state.hpp"

namespace strider::transfer {
namespace {

bool host_engine_for(const plan::Plan& p, HostPacking host) {
  return host == HostPacking::Strider ? p.supported : host_engine_serves(p);
}

// Advances a view by `bytes` (the memory's classification stays).
runtime::BufferView shifted(runtime::BufferView v, std::int64_t bytes) {
  v.host += bytes;
  if (v.device) v.device += bytes;
  return v;
}

// Whether managed memory at `buffer` moves as host memory (see view_object).
bool managed_on_host(const std::byte* buffer, const decode::Bounds& bounds, int count) {
  switch (runtime::config().managed) {
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
  o.view = shifted(object.view, static_cast<std::int64_t>(first) * object.plan->bounds.extent);
  o.count = count;
  return o;
}

int pack_object(const Object& object, std::byte* packed, const runtime::BufferView& packed_view,
                HostPacking host, MPI_Comm comm) {
  const plan::Plan& p = *object.plan;
  const int bytes = static_cast<int>(object.bytes());
  const bool gpu = object.gpu || runtime::gpu_resident(packed_view.info.kind);
  int position = 0;
  if (!gpu) {
    if (!host_engine_for(p, host)) {
      counters().packs_forwarded++;
      return STRIDER_NEXT(MPI_Pack)(object.view.host, object.count, object.type, packed, bytes,
                                    &position, comm);
    }
    engine::cpu::pack(p.form, p.bounds.extent, object.count, object.view.host, packed);
    counters().packs_host++;
    return MPI_SUCCESS;
  }
  std::string error;
  const auto outcome = gpu_engine_serves(p)
                           ? engine::cuda::pack(p.gpu_layout(), object.count, object.view,
                                                packed_view, gpu_policy(), error)
                           : engine::cuda::Outcome::Fallback;
  if (outcome == engine::cuda::Outcome::Failed) return report_error(comm, "GPU pack", error);
  if (outcome == engine::cuda::Outcome::Fallback) {
    counters().packs_staged++;
    return staged_pack(STRIDER_NEXT(MPI_Pack), p.bounds, object.view, object.count, object.type,
                       packed, packed_view.info.kind, bytes, &position, comm);
  }
  counters().packs_gpu++;
  return MPI_SUCCESS;
}

int unpack_object(const Object& object, const std::byte* packed,
                  const runtime::BufferView& packed_view, HostPacking host, MPI_Comm comm) {
  const plan::Plan& p = *object.plan;
  const int bytes = static_cast<int>(object.bytes());
  const bool gpu = object.gpu || runtime::gpu_resident(packed_view.info.kind);
  int position = 0;
  if (!gpu) {
    if (!host_engine_for(p, host)) {
      counters().unpacks_forwarded++;
      return STRIDER_NEXT(MPI_Unpack)(packed, bytes, &position, object.view.host, object.count,
                                      object.type, comm);
    }
    engine::cpu::unpack(p.form, p.bounds.extent, object.count, packed, object.view.host);
    counters().unpacks_host++;
    return MPI_SUCCESS;
  }
  std::string error;
  const auto outcome = gpu_engine_serves(p)
                           ? engine::cuda::unpack(p.gpu_layout(), object.count, packed_view,
                                                  object.view, gpu_policy(), error)
                           : engine::cuda::Outcome::Fallback;
  if (outcome == engine::cuda::Outcome::Failed) return report_error(comm, "GPU unpack", error);
  if (outcome == engine::cuda::Outcome::Fallback) {
    counters().unpacks_staged++;
    return staged_unpack(STRIDER_NEXT(MPI_Unpack), p.bounds, packed, packed_view.info.kind, bytes,
                         &position, object.view, object.count, object.type, comm);
  }
  counters().unpacks_gpu++;
  return MPI_SUCCESS;
}

}  // namespace strider::transfer
