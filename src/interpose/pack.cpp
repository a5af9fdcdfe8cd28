// MPI_Pack / MPI_Unpack: served by the host engine when the plan allows, else forwarded.
#include <mpi.h>

#include <climits>
#include <cstddef>

#include "engine/cpu/pack.hpp"
#include "interpose/next.hpp"
#include "interpose/state.hpp"
#include "plan/host_policy.hpp"
#include "runtime/config.hpp"
#include "runtime/memory_kind.hpp"

namespace strider::interpose {
namespace {

// The plan to use for a pack/unpack of `count` elements, or nullptr to forward the call.
// Argument errors are left to the MPI (forwarded), except truncation, reported by the caller.
std::shared_ptr<const plan::Plan> host_plan(MPI_Datatype type, int count, const void* user,
                                            const void* packed, int packed_size,
                                            const int* position, MPI_Comm comm) {
  const auto& cfg = runtime::config();
  if (cfg.disabled || cfg.host_engine == runtime::HostEngine::Off) return nullptr;
  if (count <= 0 || position == nullptr || *position < 0 || packed_size < 0 ||
      comm == MPI_COMM_NULL) {
    return nullptr;
  }
  auto p = plan_for(type);
  if (!p || !p->supported || p->bounds.size == 0) return nullptr;
  if (cfg.host_engine == runtime::HostEngine::Auto && !plan::host_engine_wins(*p)) return nullptr;
  if (packed == nullptr) return nullptr;
  // A null user buffer is MPI_BOTTOM: fine for absolute addresses, a crash for relative ones;
  // the MPI decides what to make of the latter.
  constexpr std::int64_t kLowestMappedAddress = 4096;
  if (user == nullptr && p->bounds.true_lb < kLowestMappedAddress) return nullptr;
  if (!runtime::host_accessible(runtime::memory_kind(packed)) ||
      !runtime::host_accessible(runtime::memory_kind(user))) {
    return nullptr;
  }
  // A position past INT_MAX cannot be returned; the MPI reports that.
  if (static_cast<std::int64_t>(count) * p->bounds.size > INT_MAX - *position) return nullptr;
  return p;
}

int truncated(MPI_Comm comm) {
  PMPI_Comm_call_errhandler(comm, MPI_ERR_TRUNCATE);
  return MPI_ERR_TRUNCATE;
}

}  // namespace
}  // namespace strider::interpose

using namespace strider::interpose;

STRIDER_EXPORT int MPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                            int outsize, int* position, MPI_Comm comm) {
  auto p = host_plan(datatype, incount, inbuf, outbuf, outsize, position, comm);
  if (!p) {
    if (!strider::runtime::config().disabled) counters().packs_forwarded++;
    return STRIDER_NEXT(MPI_Pack)(inbuf, incount, datatype, outbuf, outsize, position, comm);
  }
  const std::int64_t bytes = static_cast<std::int64_t>(incount) * p->bounds.size;
  if (*position + bytes > outsize) return truncated(comm);
  strider::engine::cpu::pack(p->form, p->bounds.extent, incount,
                             static_cast<const std::byte*>(inbuf),
                             static_cast<std::byte*>(outbuf) + *position);
  *position += static_cast<int>(bytes);
  counters().packs_host++;
  return MPI_SUCCESS;
}

STRIDER_EXPORT int MPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf,
                              int outcount, MPI_Datatype datatype, MPI_Comm comm) {
  auto p = host_plan(datatype, outcount, outbuf, inbuf, insize, position, comm);
  if (!p) {
    if (!strider::runtime::config().disabled) counters().unpacks_forwarded++;
    return STRIDER_NEXT(MPI_Unpack)(inbuf, insize, position, outbuf, outcount, datatype, comm);
  }
  const std::int64_t bytes = static_cast<std::int64_t>(outcount) * p->bounds.size;
  if (*position + bytes > insize) return truncated(comm);
  strider::engine::cpu::unpack(p->form, p->bounds.extent, outcount,
                               static_cast<const std::byte*>(inbuf) + *position,
                               static_cast<std::byte*>(outbuf));
  *position += static_cast<int>(bytes);
  counters().unpacks_host++;
  return MPI_SUCCESS;
}
