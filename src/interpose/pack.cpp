// MPI_Pack / MPI_Unpack. Host buffers: Strider's host engine where the plan and policy allow,
// else the MPI. GPU buffers (device or managed memory on either side): the GPU engine, or the
// staged path; never the MPI with a device pointer.
#include "engine/cpu/pack.hpp"

#include <mpi.h>

#include <climits>
#include <cstddef>
#include <optional>
#include <string>

#include "engine/cuda/gpu_engine.hpp"
#include "interpose/engine_choice.hpp"
#include "interpose/next.hpp"
#include "interpose/staged.hpp"
#include "interpose/state.hpp"
#include "runtime/config.hpp"
#include "runtime/memory_kind.hpp"

namespace strider::interpose {
namespace {

// What a pack or unpack call is about, once its arguments passed the checks Strider makes.
struct Call {
  std::shared_ptr<const plan::Plan> plan;
  runtime::BufferView user;
  runtime::BufferView packed;  // at the current position
  std::int64_t bytes = 0;
  bool gpu = false;  // a GPU-resident buffer is involved
};

// The call to serve, or nothing to forward it. Argument errors are left to the MPI, which
// reports them; truncation is the caller's to report.
std::optional<Call> classify(MPI_Datatype type, int count, const void* user, const void* packed,
                             int packed_size, const int* position, MPI_Comm comm) {
  if (runtime::config().disabled) return std::nullopt;
  if (count <= 0 || position == nullptr || *position < 0 || packed_size < 0 ||
      comm == MPI_COMM_NULL || packed == nullptr) {
    return std::nullopt;
  }
  Call call;
  call.plan = plan_for(type);
  if (!call.plan || call.plan->bounds.size == 0) return std::nullopt;
  // A position past INT_MAX cannot be returned; the MPI reports that.
  call.bytes = static_cast<std::int64_t>(count) * call.plan->bounds.size;
  if (call.bytes > INT_MAX - *position) return std::nullopt;
  // A null user buffer is MPI_BOTTOM: fine for absolute addresses, a crash for relative ones;
  // the MPI decides what to make of the latter.
  constexpr std::int64_t kLowestMappedAddress = 4096;
  // The memory is classified at a byte the call touches: the first packed byte's offset (the
  // MPI's true lb for types Strider does not decode).
  const plan::Plan& p = *call.plan;
  const std::int64_t probe = p.supported ? p.form.pieces.front().offset : p.bounds.true_lb;
  if (user == nullptr && probe < kLowestMappedAddress) return std::nullopt;
  call.user = runtime::view_buffer(user, probe);
  call.packed = runtime::view_buffer(static_cast<const std::byte*>(packed) + *position, 0);
  call.gpu =
      runtime::gpu_resident(call.user.info.kind) || runtime::gpu_resident(call.packed.info.kind);
  return call;
}

int truncated(MPI_Comm comm) {
  PMPI_Comm_call_errhandler(comm, MPI_ERR_TRUNCATE);
  return MPI_ERR_TRUNCATE;
}

}  // namespace
}  // namespace strider::interpose

using namespace strider;
using namespace strider::interpose;

STRIDER_EXPORT int MPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                            int outsize, int* position, MPI_Comm comm) {
  const auto next = STRIDER_NEXT(MPI_Pack);
  auto call = classify(datatype, incount, inbuf, outbuf, outsize, position, comm);
  if (!call || (!call->gpu && !host_engine_serves(*call->plan))) {
    if (!runtime::config().disabled) counters().packs_forwarded++;
    return next(inbuf, incount, datatype, outbuf, outsize, position, comm);
  }
  if (*position + call->bytes > outsize) return truncated(comm);
  const plan::Plan& p = *call->plan;
  if (!call->gpu) {
    engine::cpu::pack(p.form, p.bounds.extent, incount, call->user.host, call->packed.host);
    counters().packs_host++;
  } else {
    std::string error;
    const auto outcome = gpu_engine_serves(p)
                             ? engine::cuda::pack(p, incount, call->user, call->packed, error)
                             : engine::cuda::Outcome::Fallback;
    if (outcome == engine::cuda::Outcome::Failed) return report_error(comm, "GPU pack", error);
    if (outcome == engine::cuda::Outcome::Fallback) {
      counters().packs_staged++;
      return staged_pack(next, p.bounds, call->user, incount, datatype,
                         static_cast<std::byte*>(outbuf), call->packed.info.kind, outsize, position,
                         comm);
    }
    counters().packs_gpu++;
  }
  *position += static_cast<int>(call->bytes);
  return MPI_SUCCESS;
}

STRIDER_EXPORT int MPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf,
                              int outcount, MPI_Datatype datatype, MPI_Comm comm) {
  const auto next = STRIDER_NEXT(MPI_Unpack);
  auto call = classify(datatype, outcount, outbuf, inbuf, insize, position, comm);
  if (!call || (!call->gpu && !host_engine_serves(*call->plan))) {
    if (!runtime::config().disabled) counters().unpacks_forwarded++;
    return next(inbuf, insize, position, outbuf, outcount, datatype, comm);
  }
  if (*position + call->bytes > insize) return truncated(comm);
  const plan::Plan& p = *call->plan;
  if (!call->gpu) {
    engine::cpu::unpack(p.form, p.bounds.extent, outcount, call->packed.host, call->user.host);
    counters().unpacks_host++;
  } else {
    std::string error;
    const auto outcome = gpu_engine_serves(p)
                             ? engine::cuda::unpack(p, outcount, call->packed, call->user, error)
                             : engine::cuda::Outcome::Fallback;
    if (outcome == engine::cuda::Outcome::Failed) return report_error(comm, "GPU unpack", error);
    if (outcome == engine::cuda::Outcome::Fallback) {
      counters().unpacks_staged++;
      return staged_unpack(next, p.bounds, static_cast<const std::byte*>(inbuf),
                           call->packed.info.kind, insize, position, call->user, outcount, datatype,
                           comm);
    }
    counters().unpacks_gpu++;
  }
  *position += static_cast<int>(call->bytes);
  return MPI_SUCCESS;
}
