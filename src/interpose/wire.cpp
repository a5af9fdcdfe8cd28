#include "interpose/wire.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "engine/cuda/gpu_engine.hpp"
#include "interpose/staged.hpp"
#include "interpose/state.hpp"
#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "transport/cuda_aware.hpp"
#include "transport/perf_model.hpp"
#include "transport/placement.hpp"
#include "transport/wire_view.hpp"

namespace strider::interpose {
namespace {

using transport::Method;
using transport::wire_view;
using transport::WireMemory;

bool contiguous(const Object& o) {
  const plan::Plan& p = *o.plan;
  return p.supported && p.form.pieces.size() == 1 && p.form.pieces.front().dims.empty() &&
         (o.count == 1 || p.bounds.extent == p.bounds.size);
}

// The method for a GPU object: forced by STRIDER_METHOD / strider_set_method, or the model's
// choice for its shape. Only the device method's transfer depends on where the peer runs, so
// the placement is looked up only for a CUDA-aware MPI. (Types without a plan go through the
// MPI's own pack, which the model does not describe: they keep the rule Strider had before it
// measured, device on a CUDA-aware MPI and one-shot otherwise.)
Method method_for(const Object& o, bool receive, const Peer& peer) {
  if (!o.gpu) return Method::Host;
  const runtime::MethodChoice requested = transport::requested_method();
  const bool aware = transport::mpi_cuda_aware();
  model::Transfer automatic = aware ? model::Transfer::Device : model::Transfer::OneShot;
  if (requested == runtime::MethodChoice::Auto && o.plan->supported) {
    const model::Placement placement =
        aware ? transport::peer_placement(peer.comm, peer.rank) : model::Placement::SameNode;
    automatic = transport::perf_model().choose(model::object_shape(o.plan->shape, o.count),
                                               placement, aware, receive);
  }
  return transport::choose_method(requested, aware, automatic);
}

WireMemory memory_for(Method m) {
  switch (m) {
    case Method::Device:
      return WireMemory::Device;
    case Method::OneShot:
    case Method::Staged:
      return WireMemory::Pinned;
    case Method::Host:
      break;
  }
  return WireMemory::Host;
}

// Takes a wire buffer for the method, falling back to pageable host memory (the GPU engine then
// stages through its scratch) when the preferred memory cannot be had.
bool acquire_for(const Object& o, Method& m, std::int64_t bytes, transport::WireBuffer& w,
                 MPI_Comm comm, int& rc) {
  std::string error;
  const int device = std::max(0, o.view.info.device);
  if (transport::acquire_wire(memory_for(m), device, static_cast<std::size_t>(bytes), w, error)) {
    return true;
  }
  if (m != Method::Host) {
    runtime::log(runtime::LogLevel::Warn, "%s; staging through pageable memory", error.c_str());
    m = Method::Staged;
    if (transport::acquire_wire(WireMemory::Host, -1, static_cast<std::size_t>(bytes), w, error)) {
      return true;
    }
  }
  rc = report_error(comm, "wire buffer", error);
  return false;
}

void count_method(Method m) {
  switch (m) {
    case Method::Device:
      counters().transfers_device++;
      break;
    case Method::OneShot:
      counters().transfers_oneshot++;
      break;
    case Method::Staged:
      counters().transfers_staged++;
      break;
    case Method::Host:
      counters().transfers_host++;
      break;
  }
}

// Copies `bytes` from a wire buffer (any memory) to host memory.
bool read_wire(void* dst, const std::byte* src, const transport::WireBuffer& w, std::size_t bytes,
               std::string& error) {
  if (w.memory != WireMemory::Device) {
    std::memcpy(dst, src, bytes);
    return true;
  }
  return engine::cuda::copy(dst, src, bytes, error);
}

// The last, partial element: its current packed bytes are overwritten by those that arrived
// and unpacked back, so the bytes of the typemap that did not arrive keep their values.
int unpack_partial(const Incoming& in, int full, int rest) {
  const Object last = element_range(in.object, full, 1);
  std::vector<std::byte> packed(static_cast<std::size_t>(in.object.plan->bounds.size));
  runtime::BufferView view;
  view.host = packed.data();
  int rc = pack_object(last, packed.data(), view, HostPacking::Strider, in.comm);
  if (rc != MPI_SUCCESS) return rc;
  std::string error;
  const std::byte* arrived =
      in.wire.data() + static_cast<std::int64_t>(full) * in.object.plan->bounds.size;
  if (!read_wire(packed.data(), arrived, in.wire, static_cast<std::size_t>(rest), error)) {
    return report_error(in.comm, "reading a partial element", error);
  }
  return unpack_object(last, packed.data(), view, HostPacking::Strider, in.comm);
}

}  // namespace

bool p2p_object(const void* buffer, std::int64_t count, MPI_Datatype type, bool receive,
                const Peer& peer, Object& out) {
  const auto& cfg = runtime::config();
  if (cfg.disabled || count <= 0) return false;
  // Classified as one element when the count does not fit an int.
  if (!view_object(buffer, count > INT_MAX ? 1 : static_cast<int>(count), type, out)) return false;
  if (!out.gpu && cfg.host_p2p == runtime::HostP2P::Forward) return false;
  // A message past INT_MAX elements or packed bytes cannot be described as MPI_PACKED with an
  // int count: a host buffer goes to the MPI as it is, a GPU buffer is refused by the caller.
  if (count > INT_MAX || out.bytes() > INT_MAX) {
    out.oversized = true;
    return out.gpu;
  }
  // Contiguous GPU data for a CUDA-aware MPI: nothing to pack, the MPI takes it as it is.
  return !(out.gpu && contiguous(out) && method_for(out, receive, peer) == Method::Device);
}

int pack_outgoing(const Object& object, const Peer& peer, Outgoing& out) {
  const MPI_Comm comm = peer.comm;
  if (object.oversized) {
    return report_error(comm, "send", "a GPU message over 2^31-1 packed bytes");
  }
  out.method = method_for(object, false, peer);
  out.bytes = static_cast<int>(object.bytes());
  int rc = MPI_SUCCESS;
  if (!acquire_for(object, out.method, out.bytes, out.wire, comm, rc)) return rc;
  rc = pack_object(object, out.wire.data(), wire_view(out.wire, out.method), HostPacking::Strider,
                   comm);
  if (rc != MPI_SUCCESS) {
    release(out);
    return rc;
  }
  count_method(out.method);
  counters().sends_packed++;
  return MPI_SUCCESS;
}

void release(Outgoing& out) { transport::release_wire(out.wire); }

int prepare_incoming(const Object& object, const Peer& peer, bool keep_type, Incoming& in) {
  const MPI_Comm comm = peer.comm;
  if (object.oversized) {
    return report_error(comm, "receive", "a GPU message over 2^31-1 packed bytes");
  }
  in.object = object;
  in.comm = comm;
  in.method = method_for(object, true, peer);
  in.capacity = static_cast<int>(object.bytes());
  int rc = MPI_SUCCESS;
  if (!acquire_for(object, in.method, in.capacity, in.wire, comm, rc)) return rc;
  if (keep_type) {
    rc = PMPI_Type_dup(object.type, &in.held_type);
    if (rc != MPI_SUCCESS) {
      release(in);
      return rc;
    }
    in.object.type = in.held_type;
  }
  return MPI_SUCCESS;
}

int unpack_incoming(Incoming& in, const MPI_Status& status, bool received) {
  if (in.unpacked) return in.unpack_rc;
  in.unpacked = true;
  int cancelled = 0;
  PMPI_Test_cancelled(&status, &cancelled);
  int bytes = 0;
  if (!received || cancelled || PMPI_Get_count(&status, MPI_PACKED, &bytes) != MPI_SUCCESS ||
      bytes == MPI_UNDEFINED || bytes <= 0) {
    return in.unpack_rc = MPI_SUCCESS;
  }
  bytes = std::min(bytes, in.capacity);
  const auto size = in.object.plan->bounds.size;
  const int full = static_cast<int>(bytes / size);
  const int rest = static_cast<int>(bytes % size);
  int rc = MPI_SUCCESS;
  if (full > 0) {
    rc = unpack_object(element_range(in.object, 0, full), in.wire.data(),
                       wire_view(in.wire, in.method), HostPacking::Strider, in.comm);
  }
  if (rc == MPI_SUCCESS && rest > 0) rc = unpack_partial(in, full, rest);
  if (rc == MPI_SUCCESS) {
    count_method(in.method);
    counters().recvs_packed++;
  }
  return in.unpack_rc = rc;
}

int complete_incoming(Incoming& in, const MPI_Status& status, bool received) {
  const int rc = unpack_incoming(in, status, received);
  release(in);
  return rc;
}

void release(Incoming& in) {
  transport::release_wire(in.wire);
  if (in.held_type != MPI_DATATYPE_NULL) PMPI_Type_free(&in.held_type);
}

}  // namespace strider::interpose
