// Point-to-point on buffers Strider packs: the message on the wire is always the object's packed
// bytes (as MPI_PACKED, or bounded for a message to self: wire_shape.hpp), whichever method
// moved them, so each side chooses on its own and a side the MPI serves directly (a host
// buffer) still matches.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/cuda/batch_plan.hpp"
#include "ipc/wire_buffers.hpp"
#include "transfer/method.hpp"
#include "transfer/object.hpp"
#include "transfer/receive_extras.hpp"
#include "transfer/wire_shape.hpp"

namespace strider::transfer {

// The other side of a transfer: errors are reported through `comm`; `rank` (MPI_ANY_SOURCE when
// unknown) tells the performance model whether the peer shares this node.
struct Peer {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = MPI_ANY_SOURCE;
};

// The object at a point-to-point buffer if Strider moves it (GPU-resident memory, or any host
// buffer with STRIDER_P2P_HOST=pack); false to hand the call to the MPI unchanged (host memory,
// zero counts, unknown types, contiguous GPU data for a CUDA-aware MPI).
// A count past INT_MAX (the `_c` calls) is Strider's only to refuse it for a GPU buffer.
// `persistent` (MPI_Send_init, ...): every GPU buffer is Strider's, contiguous ones too, and
// its wire is pinned host memory, because an MPI's persistent requests are not trusted with
// device memory (Open MPI 4.1.4 --with-cuda delivered the first start's bytes again at later
// starts, contiguous buffers included: two H100s, 2026-11-27).
bool p2p_object(const void* buffer, std::int64_t count, MPI_Datatype type, bool receive,
                const Peer& peer, Object& out, bool persistent = false);
// How this side moves the object's packed bytes (Host for a host buffer): STRIDER_METHOD, or
// the performance model's choice; never Device for a persistent request's object.
Method method_for(const Object& object, bool receive, const Peer& peer);
// A wire buffer of `bytes` for `method` (its memory on GPU `device` where that is device memory).
// Where that memory cannot be had, pageable host memory, `method` becoming Staged (the GPU
// engine stages through its scratch). False with `error` when neither can be had.
bool acquire_wire_for(Method& method, int device, std::size_t bytes, ipc::WireBuffer& out,
                      std::string& error);
// Overrides STRIDER_P2P_HOST from now on (strider_set_p2p_host).
void set_p2p_host(bool pack);

// Whether Strider's own engine packs or unpacks the object against a wire of `method` whatever
// happens, so that the MPI's pack (the staged path, which needs the type) is never called: a
// plan of its own, and for a GPU object kernels that reach the wire (no scratch that could be
// missing).
bool moves_without_type(const Object& object, Method method);

// A send's packed bytes (its wire buffer is released when it is destroyed, or earlier by
// release()): `shape.count` of `shape.type` at `wire.data()` for the MPI.
struct Outgoing {
  ipc::WireBuffer wire;
  WireShape shape;  // bounded for a message to self (wire_shape.hpp)
  transfer::Method method = transfer::Method::Host;
};
// Packs the object by the method chosen for it; errors are reported and returned.
int pack_outgoing(const Object& object, const Peer& peer, Outgoing& out);
// The two halves of pack_outgoing, for a send packed at each start (persistent requests): the
// wire buffer and its shape, then the packing into them.
int prepare_outgoing(const Object& object, const Peer& peer, Outgoing& out);
int pack_prepared(const Object& object, Outgoing& out, MPI_Comm comm);
// A send about to go, for pack_wave.
struct Outbound {
  const Object* object = nullptr;
  Outgoing* out = nullptr;  // prepared
  MPI_Comm comm = MPI_COMM_NULL;
};
// Sends started together (MPI_Startall, a flush of deferred sends), each packed into its
// prepared wire: the plain ones (a GPU object the engine serves, a wire its kernels reach) by one
// kernel, the others each with pack_prepared; `rcs[i]` is send i's result. STRIDER_BURST=0:
// nothing is batched.
void pack_wave(std::span<const Outbound> sends, std::vector<int>& rcs);
// A wave's copies, all on GPU `device`, as one kernel: false (nothing done) for fewer than two or
// when the batch could not run; each copy then goes the usual way and reports its own error.
bool run_wave(const std::vector<engine::cuda::BatchCopy>& copies, int device);
// An object, and its dense packed bytes at `packed`, as the sides of a batched copy.
engine::cuda::BatchSide object_side(const Object& object);
engine::cuda::BatchSide packed_side(const Object& object, std::byte* packed);
void release(Outgoing& out);

// A duplicate of the application's type, freed by free() or when destroyed.
class HeldType {
 public:
  HeldType() = default;
  HeldType(HeldType&& other) noexcept : type_(std::exchange(other.type_, MPI_DATATYPE_NULL)) {}
  HeldType& operator=(HeldType&& other) noexcept {
    if (this != &other) {
      free();
      type_ = std::exchange(other.type_, MPI_DATATYPE_NULL);
    }
    return *this;
  }
  ~HeldType() { free(); }
  // Duplicates `type`; the MPI's error code.
  int dup(MPI_Datatype type) { return PMPI_Type_dup(type, &type_); }
  MPI_Datatype get() const { return type_; }
  void free() {
    if (type_ != MPI_DATATYPE_NULL) PMPI_Type_free(&type_);
  }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// A receive's wire buffer, and what to unpack into when it completes.
struct Incoming {
  Object object;
  ipc::WireBuffer wire;
  int capacity = 0;  // bytes the application's receive holds
  WireShape post;    // what the MPI is given: bounded to the capacity (wire_shape.hpp)
  transfer::Method method = transfer::Method::Host;
  MPI_Comm comm = MPI_COMM_NULL;
  HeldType held_type;        // a dup keeping the MPI's type alive, if needed
  bool unpacked = false;     // done already (MPI_Request_get_status saw it complete)
  bool hole_closed = false;  // this arrival's last byte is back before the hole (unpack_wave)
  int unpack_rc = MPI_SUCCESS;
  // The count Strider set on the completion's status (the bytes an offer delivered, those that
  // fit a truncation only it sees), or -1: set again on a later status of the same completion
  // (MPI_Request_get_status, then MPI_Wait, gets the MPI's status of the notice twice).
  std::int64_t status_bytes = -1;
  std::unique_ptr<ReceiveExtras> extras;  // the offers' ticket and offer, where it has them
};
// `keep_type`: the unpack may come after the call returns (a nonblocking receive), when the
// application may have freed its type: a duplicate keeps it alive for the MPI's unpack, which
// the staged path uses. Where Strider's engine unpacks whatever arrives, no duplicate is made
// and `in.object.type` is MPI_DATATYPE_NULL (should a GPU unpack of a partial element find no
// scratch memory, that receive then fails with the MPI's type error instead of reading a freed
// type).
int prepare_incoming(const Object& object, const Peer& peer, bool keep_type, Incoming& in);
// The wire receive has completed with `error`, the MPI's for it: unpacks the bytes that
// arrived, which may be fewer than posted, even a partial element, unless the receive failed or
// was cancelled. A truncated message unpacks nothing (MPIs differ in what they deliver then).
// A message past the capacity that only Strider sees (a receive under 2 bytes,
// wire_shape.hpp) gets its status's count set to the capacity and MPI_ERR_TRUNCATE reported
// through the communicator's error handler.
// Returns Strider's own error, not the MPI's. Releases everything either way.
int complete_incoming(Incoming& in, MPI_Status& status, int error);
// The unpacking part alone, once: for a completion seen before the request is freed.
int unpack_incoming(Incoming& in, MPI_Status& status, int error);
// Several receives one completion call saw complete (an arrival wave), each with its status
// and the MPI's error for it: the plain ones among them (the whole object arrived into a wire
// the GPU reaches, no offer, no hole, no truncation) are unpacked by one kernel and marked
// unpacked, so that their complete_incoming only releases. The others are left as they were,
// for complete_incoming to unpack one by one. STRIDER_BURST=0: nothing is batched.
void unpack_wave(std::span<Incoming* const> ins, std::span<MPI_Status* const> statuses,
                 std::span<const int> errors);
// Whether a wave's kernel may unpack `in` (a GPU object the engine serves, a wire its kernels
// reach, no hole in device memory), should its whole object arrive.
bool joins_waves(const Incoming& in);
// Whether `in` completed plainly, as a wave's kernel unpacks it: the whole object arrived in the
// wire, with no error (`error`), cancel or truncation, and its extras (if any) settled.
bool plain_arrival(const Incoming& in, const MPI_Status& status, int error);
void release(Incoming& in);

}  // namespace strider::transfer
