#include "transfer/wire.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

#include "engine/cuda/gpu_engine.hpp"
#include "runtime/log.hpp"
#include "transfer/cuda_aware.hpp"
#include "transfer/engine_choice.hpp"
#include "transfer/perf_model.hpp"
#include "transfer/placement.hpp"
#include "transfer/settings.hpp"
#include "transfer/staged.hpp"
#include "transfer/state.hpp"
#include "transfer/wire_view.hpp"

namespace strider::transfer {
namespace {

bool contiguous(const Object& o) {
  const plan::Plan& p = *o.plan;
  return p.supported && p.form.pieces.size() == 1 && p.form.pieces.front().dims.empty() &&
         (o.count == 1 || p.bounds.extent == p.bounds.size);
}

}  // namespace

// The method for a GPU object: forced by STRIDER_METHOD / strider_set_method, or the model's
// choice for its shape. Only the device method's transfer depends on where the peer runs, so
// the placement is looked up only for a CUDA-aware MPI. (Types without a plan go through the
// MPI's own pack, which the model does not describe: they keep the rule Strider had before it
// measured, device on a CUDA-aware MPI and one-shot otherwise.)
Method method_for(const Object& o, bool receive, const Peer& peer) {
  if (!o.gpu) return Method::Host;
  const MethodRequest requested = transfer::requested_method();
  // A persistent request's wire is chosen as on an MPI that is not CUDA-aware (never device
  // memory: see p2p_object).
  const bool aware = transfer::mpi_cuda_aware() && !o.persistent;
  model::Method automatic = aware ? model::Method::Device : model::Method::OneShot;
  if (!requested && o.plan->supported) {
    const model::Placement placement =
        aware ? transfer::peer_placement(peer.comm, peer.rank) : model::Placement::SameNode;
    automatic = transfer::perf_model().choose(model::object_shape(o.plan->shape, o.count),
                                              placement, aware, receive);
  }
  return transfer::choose_method(requested, aware, automatic);
}

bool acquire_wire_for(Method& method, int device, std::size_t bytes, ipc::WireBuffer& out,
                      std::string& error) {
  if (ipc::acquire_wire(traits_of(method).wire_memory, device, bytes, out, error)) return true;
  if (method == Method::Host) return false;
  runtime::log(runtime::LogLevel::Warn, "%s; staging through pageable memory", error.c_str());
  method = Method::Staged;
  return ipc::acquire_wire(ipc::WireMemory::Host, -1, bytes, out, error);
}

namespace {

// Takes a wire buffer for the method (see acquire_wire_for), or reports why there is none.
bool acquire_for(const Object& o, Method& m, std::int64_t bytes, ipc::WireBuffer& w, MPI_Comm comm,
                 int& rc) {
  std::string error;
  if (acquire_wire_for(m, std::max(0, o.view.info.device), static_cast<std::size_t>(bytes), w,
                       error)) {
    return true;
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

// Copies `bytes` from a wire buffer (any memory) to host memory or within that wire buffer.
bool read_wire(void* dst, const std::byte* src, const ipc::WireBuffer& w, std::size_t bytes,
               std::string& error) {
  if (w.memory != ipc::WireMemory::Device) {
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

// A bounded wire shape's last byte lies past its one-byte hole (wire_shape.hpp): copies the byte
// at `from` to `to`, next to it.
int move_hole_byte(const ipc::WireBuffer& wire, std::byte* from, std::byte* to, MPI_Comm comm) {
  std::string error;
  if (!read_wire(to, from, wire, 1, error)) {
    return report_error(comm, "moving a wire buffer's last byte over its hole", error);
  }
  return MPI_SUCCESS;
}

// A bounded wire receive that filled its type: its last byte comes back before the hole.
int close_hole(const Incoming& in) {
  std::byte* last = in.wire.data() + in.post.posted - 1;
  return move_hole_byte(in.wire, last + 1, last, in.comm);
}

// A bounded wire send: its last byte goes past the hole.
int open_hole(const Outgoing& out, MPI_Comm comm) {
  std::byte* last = out.wire.data() + out.shape.posted - 1;
  return move_hole_byte(out.wire, last, last + 1, comm);
}

// Whether `peer` is the calling process itself (`self`; messages to self, wire_shape.hpp). An
// error where the MPI rejects the communicator: it has called its error handler, so the send
// returns that error rather than go on to the MPI's send, which would call it again.
int to_self(const Peer& peer, bool& self) {
  self = false;
  int inter = 0, rank = MPI_PROC_NULL;
  if (peer.rank < 0) return MPI_SUCCESS;
  if (const int rc = PMPI_Comm_test_inter(peer.comm, &inter); rc != MPI_SUCCESS) return rc;
  if (inter) return MPI_SUCCESS;
  if (const int rc = PMPI_Comm_rank(peer.comm, &rank); rc != MPI_SUCCESS) return rc;
  self = rank == peer.rank;
  return MPI_SUCCESS;
}

}  // namespace

namespace {
// -1: as configured; 0 / 1: forward / pack.
std::atomic<int> g_p2p_host{-1};
}  // namespace

void set_p2p_host(bool pack) { g_p2p_host.store(pack ? 1 : 0, std::memory_order_relaxed); }

bool p2p_object(const void* buffer, std::int64_t count, MPI_Datatype type, bool receive,
                const Peer& peer, Object& out, bool persistent) {
  const Settings& cfg = settings();
  const int host_override = g_p2p_host.load(std::memory_order_relaxed);
  const bool pack_host =
      host_override < 0 ? cfg.host_p2p == runtime::HostPath::Pack : host_override == 1;
  if (cfg.disabled || count <= 0) return false;
  // Classified as one element when the count does not fit an int.
  if (!view_object(buffer, count > INT_MAX ? 1 : static_cast<int>(count), type, out)) return false;
  if (!out.gpu && !pack_host) return false;
  out.persistent = persistent;
  // A message past INT_MAX elements or packed bytes cannot be described as MPI_PACKED with an
  // int count: a host buffer goes to the MPI as it is, a GPU buffer is refused by the caller.
  if (count > INT_MAX || out.bytes() > INT_MAX) {
    out.oversized = true;
    return out.gpu;
  }
  // Contiguous GPU data for a CUDA-aware MPI: nothing to pack, the MPI takes it as it is (the
  // model's per-message cost of the device method is a burst's, which would send a lone small
  // message through pinned memory at twice its time), unless STRIDER_METHOD asks for a host
  // method or the request is persistent.
  const bool hand_over =
      out.gpu && contiguous(out) && !persistent && transfer::mpi_cuda_aware() &&
      (!transfer::requested_method() || method_for(out, receive, peer) == Method::Device);
  return !hand_over;
}

bool moves_without_type(const Object& object, Method method) {
  if (!object.plan->supported) return false;
  if (!object.gpu) return true;  // the host engine (HostPacking::Strider)
  return gpu_engine_serves(*object.plan) && traits_of(method).kernel_reaches_wire &&
         method != Method::Host;
}

int prepare_outgoing(const Object& object, const Peer& peer, Outgoing& out) {
  const MPI_Comm comm = peer.comm;
  if (object.oversized) {
    return report_error(comm, "send", "a GPU message over 2^31-1 packed bytes");
  }
  bool self = false;
  int rc = to_self(peer, self);
  if (rc != MPI_SUCCESS) return rc;
  out.method = method_for(object, false, peer);
  rc = make_wire_send(static_cast<int>(object.bytes()), self, out.shape);
  if (rc != MPI_SUCCESS) return rc;
  acquire_for(object, out.method, out.shape.footprint, out.wire, comm, rc);
  return rc;
}

int pack_prepared(const Object& object, Outgoing& out, MPI_Comm comm) {
  int rc = pack_object(object, out.wire.data(), wire_view(out.wire, out.method),
                       HostPacking::Strider, comm);
  if (rc == MPI_SUCCESS && out.shape.hole) rc = open_hole(out, comm);
  if (rc != MPI_SUCCESS) return rc;
  count_method(out.method);
  counters().sends_packed++;
  return MPI_SUCCESS;
}

int pack_outgoing(const Object& object, const Peer& peer, Outgoing& out) {
  const int rc = prepare_outgoing(object, peer, out);
  // On failure `out` releases its wire buffer and type.
  return rc != MPI_SUCCESS ? rc : pack_prepared(object, out, peer.comm);
}

void release(Outgoing& out) {
  ipc::release_wire(out.wire);
  free_wire_shape(out.shape);
}

int prepare_incoming(const Object& object, const Peer& peer, bool keep_type, Incoming& in) {
  const MPI_Comm comm = peer.comm;
  if (object.oversized) {
    return report_error(comm, "receive", "a GPU message over 2^31-1 packed bytes");
  }
  in.object = object;
  in.comm = comm;
  in.method = method_for(object, true, peer);
  in.capacity = static_cast<int>(object.bytes());
  int rc = make_wire_receive(in.capacity, in.post);
  if (rc != MPI_SUCCESS) return rc;
  if (!acquire_for(object, in.method, in.post.footprint, in.wire, comm, rc)) return rc;
  if (keep_type && moves_without_type(object, in.method)) {
    in.object.type = MPI_DATATYPE_NULL;  // the application may free it; never needed
  } else if (keep_type) {
    rc = in.held_type.dup(object.type);
    if (rc != MPI_SUCCESS) return rc;  // `in` releases its wire buffer
    in.object.type = in.held_type.get();
  }
  return MPI_SUCCESS;
}

int unpack_incoming(Incoming& in, MPI_Status& status, int error) {
  if (in.unpacked) {
    if (in.status_bytes >= 0) PMPI_Status_set_elements_x(&status, MPI_BYTE, in.status_bytes);
    return in.unpack_rc;
  }
  in.unpacked = true;
  // The data came by a same-node offer (docs/same-node-p2p.md): unpacked from its landing buffer.
  if (int rc = MPI_SUCCESS; in.extras && in.extras->settle(in, status, error, rc)) {
    return in.unpack_rc = rc;
  }
  int cancelled = 0;
  PMPI_Test_cancelled(&status, &cancelled);
  int bytes = 0;
  // A truncated message is not unpacked: what an MPI delivers then differs (Open MPI the first
  // bytes, MPICH 4.0 nothing, with a count unrelated to the message).
  if (error != MPI_SUCCESS || cancelled ||
      PMPI_Get_count(&status, MPI_BYTE, &bytes) != MPI_SUCCESS || bytes == MPI_UNDEFINED ||
      bytes <= 0) {
    return in.unpack_rc = MPI_SUCCESS;
  }
  const int arrived = std::min(bytes, in.post.posted);
  int rc = MPI_SUCCESS;
  if (in.post.hole && !in.hole_closed && arrived == in.post.posted) rc = close_hole(in);
  // More than the capacity, within what was posted: a truncation only Strider can see.
  const bool strider_truncates = bytes > in.capacity && bytes <= in.post.posted;
  if (rc == MPI_SUCCESS && strider_truncates) {
    rc = PMPI_Status_set_elements_x(&status, MPI_BYTE, in.capacity);  // the bytes that fit
    in.status_bytes = in.capacity;
  }
  bytes = strider_truncates ? 0 : arrived;
  const auto size = in.object.plan->bounds.size;
  const int full = static_cast<int>(bytes / size);
  const int rest = static_cast<int>(bytes % size);
  if (rc == MPI_SUCCESS && full > 0) {
    rc = unpack_object(element_range(in.object, 0, full), in.wire.data(),
                       wire_view(in.wire, in.method), HostPacking::Strider, in.comm);
  }
  if (rc == MPI_SUCCESS && rest > 0) rc = unpack_partial(in, full, rest);
  if (rc == MPI_SUCCESS) {
    count_method(in.method);
    counters().recvs_packed++;
  }
  if (rc == MPI_SUCCESS && strider_truncates) {
    PMPI_Comm_call_errhandler(in.comm, MPI_ERR_TRUNCATE);
    rc = MPI_ERR_TRUNCATE;
  }
  return in.unpack_rc = rc;
}

namespace {

// Whether the GPU's kernels move `object` to or from `wire` within a wave's one kernel: a GPU
// object the engine serves and a wire the kernels reach, with no hole in device memory (a bounded
// wire's hole byte is moved on the host).
bool wave_ready(const Object& object, const ipc::WireBuffer& wire, Method method, bool hole) {
  return object.gpu && object.view.device && gpu_engine_serves(*object.plan) &&
         traits_of(method).kernel_reaches_wire && method != Method::Host &&
         !(hole && wire.memory == ipc::WireMemory::Device);
}

}  // namespace

bool joins_waves(const Incoming& in) {
  return wave_ready(in.object, in.wire, in.method, in.post.hole);
}

bool plain_arrival(const Incoming& in, const MPI_Status& status, int error) {
  if (in.unpacked || error != MPI_SUCCESS || (in.extras && in.extras->unsettled()) ||
      !joins_waves(in)) {
    return false;
  }
  int cancelled = 0, bytes = 0;
  PMPI_Test_cancelled(&status, &cancelled);
  return !cancelled && PMPI_Get_count(&status, MPI_BYTE, &bytes) == MPI_SUCCESS &&
         bytes == in.object.bytes() && bytes <= in.capacity;
}

bool run_wave(const std::vector<engine::cuda::BatchCopy>& copies, int device) {
  if (copies.size() < 2) return false;
  std::string error;
  return engine::cuda::copy_batch(copies, device, gpu_policy(), error) ==
         engine::cuda::Outcome::Done;
}

engine::cuda::BatchSide object_side(const Object& object) {
  const plan::Plan& p = *object.plan;
  return {&p.form, p.bounds.extent, &p.gpu, object.count, object.view.device};
}

engine::cuda::BatchSide packed_side(const Object& object, std::byte* packed) {
  return {nullptr, 0, nullptr, object.bytes(), packed};
}

void unpack_wave(std::span<Incoming* const> ins, std::span<MPI_Status* const> statuses,
                 std::span<const int> errors) {
  if (!settings().bursts || ins.size() < 2) return;
  std::vector<engine::cuda::BatchCopy> copies;
  std::vector<Incoming*> taken;
  int device = -1;
  for (std::size_t i = 0; i < ins.size(); ++i) {
    Incoming& in = *ins[i];
    if (!plain_arrival(in, *statuses[i], errors[i])) continue;
    const int d = in.object.view.info.device;
    if (device < 0) device = d;
    if (d != device) continue;  // another GPU's: one by one
    const runtime::BufferView wire = wire_view(in.wire, in.method);
    if (!wire.device) continue;
    // The last byte back before the hole (as unpack_incoming does), once: should the batch
    // fail, unpack_incoming must not move it again.
    if (in.post.hole && !in.hole_closed && in.object.bytes() == in.post.posted) {
      if (close_hole(in) != MPI_SUCCESS) continue;
      in.hole_closed = true;
    }
    copies.push_back({packed_side(in.object, wire.device), object_side(in.object)});
    taken.push_back(&in);
  }
  if (!run_wave(copies, device)) return;
  for (Incoming* in : taken) {
    in->unpacked = true;
    in->unpack_rc = MPI_SUCCESS;
    count_method(in->method);
    counters().recvs_packed++;
    counters().unpacks_gpu++;
  }
  counters().unpack_waves++;
}

namespace {

// pack_wave's one kernel: `packed[i]` says which sends it packed.
void pack_together(std::span<const Outbound> sends, std::vector<char>& packed) {
  packed.assign(sends.size(), 0);
  if (!settings().bursts || sends.size() < 2) return;
  std::vector<engine::cuda::BatchCopy> copies;
  std::vector<std::size_t> taken;
  int device = -1;
  for (std::size_t i = 0; i < sends.size(); ++i) {
    const Object& object = *sends[i].object;
    const Outgoing& out = *sends[i].out;
    if (!wave_ready(object, out.wire, out.method, out.shape.hole)) continue;
    const int d = object.view.info.device;
    if (device < 0) device = d;
    if (d != device) continue;  // another GPU's: one by one
    const runtime::BufferView wire = wire_view(out.wire, out.method);
    if (!wire.device) continue;
    copies.push_back({object_side(object), packed_side(object, wire.device)});
    taken.push_back(i);
  }
  if (!run_wave(copies, device)) return;
  for (const std::size_t i : taken) {
    Outgoing& out = *sends[i].out;
    // A bounded send's last byte past its hole (pinned wires only, see wave_ready).
    if (out.shape.hole && open_hole(out, sends[i].comm) != MPI_SUCCESS) continue;
    packed[i] = 1;
    count_method(out.method);
    counters().sends_packed++;
    counters().packs_gpu++;
  }
  counters().pack_waves++;
}

}  // namespace

void pack_wave(std::span<const Outbound> sends, std::vector<int>& rcs) {
  std::vector<char> packed;
  pack_together(sends, packed);
  rcs.assign(sends.size(), MPI_SUCCESS);
  for (std::size_t i = 0; i < sends.size(); ++i) {
    if (!packed[i]) rcs[i] = pack_prepared(*sends[i].object, *sends[i].out, sends[i].comm);
  }
}

int complete_incoming(Incoming& in, MPI_Status& status, int error) {
  const int rc = unpack_incoming(in, status, error);
  release(in);
  return rc;
}

void release(Incoming& in) {
  if (in.extras) in.extras->release();
  ipc::release_wire(in.wire);
  free_wire_shape(in.post);
  in.held_type.free();
}

}  // namespace strider::transfer
