// MPI_Pack / MPI_Unpack. Host buffers: Strider's host engine where the plan and policy allow,
// else the MPI. GPU buffers (device or managed memory on either side): the GPU engine, or the
// staged path; never the MPI with a device pointer.
#include <mpi.h>

#include <climits>
#include <cstddef>
#include <optional>

#include "calls/deferred_sends.hpp"
#include "interpose/export.hpp"
#include "runtime/memory_kind.hpp"
#include "transfer/engine_choice.hpp"
#include "transfer/next.hpp"
#include "transfer/object.hpp"
#include "transfer/settings.hpp"
#include "transfer/state.hpp"

namespace strider::interpose {
namespace {

using namespace transfer;

// What a pack or unpack call is about, once its arguments passed the checks Strider makes.
struct Call {
  Object object;
  std::byte* packed = nullptr;  // at the current position
  runtime::BufferView packed_view;
  bool gpu = false;  // a GPU-resident buffer is involved
};

// The call to serve, or nothing to forward it. Argument errors are left to the MPI, which
// reports them; truncation is the caller's to report.
std::optional<Call> classify(MPI_Datatype type, int count, const void* user, const void* packed,
                             int packed_size, const int* position, MPI_Comm comm) {
  if (transfer::settings().disabled) return std::nullopt;
  if (count <= 0 || position == nullptr || *position < 0 || packed_size < 0 ||
      comm == MPI_COMM_NULL || packed == nullptr) {
    return std::nullopt;
  }
  Call call;
  if (!view_object(user, count, type, call.object)) return std::nullopt;  // empty types too
  // A position past INT_MAX cannot be returned; the MPI reports that.
  if (call.object.bytes() > INT_MAX - *position) return std::nullopt;
  call.packed = const_cast<std::byte*>(static_cast<const std::byte*>(packed)) + *position;
  call.packed_view = runtime::view_buffer(call.packed, 0);
  call.gpu = call.object.gpu || runtime::gpu_resident(call.packed_view.info.kind);
  return call;
}

// The MPI's verdict on the communicator, which its own MPI_Pack and MPI_Unpack give (a freed
// handle: its error handler called, MPI_ERR_COMM), though Strider's packing needs none.
int judged_comm(MPI_Comm comm) {
  int size = 0;
  return PMPI_Comm_size(comm, &size);
}

int truncated(MPI_Comm comm) {
  PMPI_Comm_call_errhandler(comm, MPI_ERR_TRUNCATE);
  return MPI_ERR_TRUNCATE;
}

}  // namespace
}  // namespace strider::interpose

using namespace strider;
using namespace strider::interpose;
using namespace strider::transfer;

STRIDER_EXPORT int MPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                            int outsize, int* position, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  const auto next = STRIDER_NEXT(MPI_Pack);
  auto call = classify(datatype, incount, inbuf, outbuf, outsize, position, comm);
  if (!call || (!call->gpu && !host_engine_serves(*call->object.plan))) {
    if (!transfer::settings().disabled) counters().packs_forwarded++;
    return next(inbuf, incount, datatype, outbuf, outsize, position, comm);
  }
  if (const int rc = judged_comm(comm); rc != MPI_SUCCESS) return rc;
  if (*position + call->object.bytes() > outsize) return truncated(comm);
  const int rc =
      pack_object(call->object, call->packed, call->packed_view, HostPacking::Policy, comm);
  if (rc == MPI_SUCCESS) *position += static_cast<int>(call->object.bytes());
  return rc;
}

STRIDER_EXPORT int MPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf,
                              int outcount, MPI_Datatype datatype, MPI_Comm comm) {
  const strider::calls::EntryCall entry;
  const auto next = STRIDER_NEXT(MPI_Unpack);
  auto call = classify(datatype, outcount, outbuf, inbuf, insize, position, comm);
  if (!call || (!call->gpu && !host_engine_serves(*call->object.plan))) {
    if (!transfer::settings().disabled) counters().unpacks_forwarded++;
    return next(inbuf, insize, position, outbuf, outcount, datatype, comm);
  }
  if (const int rc = judged_comm(comm); rc != MPI_SUCCESS) return rc;
  if (*position + call->object.bytes() > insize) return truncated(comm);
  const int rc =
      unpack_object(call->object, call->packed, call->packed_view, HostPacking::Policy, comm);
  if (rc == MPI_SUCCESS) *position += static_cast<int>(call->object.bytes());
  return rc;
}
