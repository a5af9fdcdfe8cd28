#include "transfer/collective/same_node.hpp"

#include <mutex>
#include <string>
#include <vector>

#include "engine/cuda/gpu_engine.hpp"
#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "transfer/collective/batch.hpp"
#include "transfer/staged.hpp"
#include "transfer/state.hpp"
#include "transfer/wire_ipc.hpp"
#include "transfer/wire_view.hpp"

namespace strider::transfer::collective {
namespace {

// ---- step 1: the communicator's verdict, cached as an attribute -----------------------------

std::mutex g_keyval_mutex;
int g_keyval = MPI_KEYVAL_INVALID;

int delete_verdict(MPI_Comm, int, void* value, void*) {
  delete static_cast<bool*>(value);
  return MPI_SUCCESS;
}

int keyval() {
  std::lock_guard lock(g_keyval_mutex);
  if (g_keyval == MPI_KEYVAL_INVALID &&
      PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_verdict, &g_keyval, nullptr) !=
          MPI_SUCCESS) {
    g_keyval = MPI_KEYVAL_INVALID;
  }
  return g_keyval;
}

// Collective on the first call for `comm`. A duplicate asks again (the null copy function).
bool same_node_comm(MPI_Comm comm, int size) {
  const int key = keyval();
  if (key == MPI_KEYVAL_INVALID) return false;  // every rank alike: the MPI refused a key
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, key, &value, &found) == MPI_SUCCESS && found) {
    return *static_cast<bool*>(value);
  }
  int mine = runtime::config().same_node && engine::cuda::device_count() > 0;
  MPI_Comm node = MPI_COMM_NULL;
  int node_size = 0;
  if (PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS ||
      PMPI_Comm_size(node, &node_size) != MPI_SUCCESS || node_size != size) {
    mine = 0;
  }
  if (node != MPI_COMM_NULL) PMPI_Comm_free(&node);
  int all = 0;
  if (PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) all = 0;
  PMPI_Comm_set_attr(comm, key, new bool(all != 0));
  return all != 0;
}

// ---- step 2: the record of each piece --------------------------------------------------------

// A receive slot's record before the exchange: still there afterwards when no one sends to the
// slot (an MPI_PROC_NULL neighbour), so that the piece is left as it is.
constexpr std::int32_t kNoSender = -1;

struct Record {
  std::int32_t ready = 0;   // the sender takes part (1), or not (0)
  std::int32_t sender = 0;  // its rank in the communicator: its own records need no mapping
  std::int64_t offset = 0;  // of the piece's packed bytes in the sender's wire
  std::int64_t bytes = 0;
  std::int64_t wire_bytes = 0;  // the wire's allocation
  WireHandle wire;
};

int exchange_records(MPI_Comm comm, const SameNodeShape& shape, const std::vector<Record>& out,
                     std::vector<Record>& in) {
  constexpr int kBytes = sizeof(Record);
  // Never a null array: an MPI may reject one even for no neighbours.
  Record spare_out, spare_in;
  const void* send = out.empty() ? &spare_out : static_cast<const void*>(out.data());
  void* recv = in.empty() ? &spare_in : static_cast<void*>(in.data());
  switch (shape.exchange) {
    case SameNodeShape::Exchange::Alltoall:
      return PMPI_Alltoall(send, kBytes, MPI_BYTE, recv, kBytes, MPI_BYTE, comm);
    case SameNodeShape::Exchange::Allgather:
      return PMPI_Allgather(send, kBytes, MPI_BYTE, recv, kBytes, MPI_BYTE, comm);
    case SameNodeShape::Exchange::Gather:
      return PMPI_Gather(send, kBytes, MPI_BYTE, recv, kBytes, MPI_BYTE, shape.root, comm);
    case SameNodeShape::Exchange::Scatter:
      return PMPI_Scatter(send, kBytes, MPI_BYTE, recv, kBytes, MPI_BYTE, shape.root, comm);
    case SameNodeShape::Exchange::Bcast:
      // The root's record, into every other rank's one slot.
      return PMPI_Bcast(out.empty() ? recv : const_cast<void*>(send), kBytes, MPI_BYTE, shape.root,
                        comm);
    case SameNodeShape::Exchange::NeighborAlltoall:
      return PMPI_Neighbor_alltoall(send, kBytes, MPI_BYTE, recv, kBytes, MPI_BYTE, comm);
    case SameNodeShape::Exchange::NeighborAllgather:
      return PMPI_Neighbor_allgather(send, kBytes, MPI_BYTE, recv, kBytes, MPI_BYTE, comm);
  }
  return MPI_ERR_INTERN;
}

// A side Strider can move GPU to GPU: GPU pieces, or none with bytes (nothing to touch).
bool movable(const Side& side) { return side.bytes() == 0 || (side.gpu() && side.converted()); }

// Unpins the mappings a call read, once no kernel reads them any more.
struct Pinned {
  std::vector<const std::byte*> mapped;
  ~Pinned() {
    for (const std::byte* m : mapped) unpin_wire(m);
  }
};

// The device every GPU piece of the call lives on; -1 when they are not all on one GPU, in
// memory the batch kernel takes.
int call_device(const Side& source, const Side& recv) {
  int device = -1;
  const auto take = [&](const Side& side) {
    for (const Piece& p : side.pieces()) {
      if (p.bytes() == 0) continue;
      if (!batch_takes(p)) return false;
      const int d = p.object.view.info.device;
      if (d < 0 || (device >= 0 && d != device)) return false;
      device = d;
    }
    return true;
  };
  if (!take(source) || !take(recv)) return -1;
  return device >= 0 ? device : engine::cuda::current_device();  // nothing to move: any GPU
}

}  // namespace

bool same_node_collective(MPI_Comm comm, const SameNodeShape& shape, Call* call, int& rc) {
  // Off on every rank alike (the setting must match), so no rank asks.
  if (!runtime::config().same_node) return false;
  int inter = 0, size = 0, me = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return false;
  if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size < 2 ||
      PMPI_Comm_rank(comm, &me) != MPI_SUCCESS || !same_node_comm(comm, size)) {
    return false;
  }
  const int first = shape.source_first, last = first + shape.send_records;
  const auto private_own = [&](int k) { return shape.own_send_private && k == shape.own_send; };

  // Step 2: this rank's records, ready when it can take part.
  Side* source = call ? (shape.source_is_recv ? &call->recv : &call->send) : nullptr;
  std::vector<Record> out(static_cast<std::size_t>(shape.send_records));
  std::vector<Record> in(static_cast<std::size_t>(shape.recv_records));
  for (Record& r : in) r.ready = kNoSender;
  WireBuffer wire;
  WireHandle handle;
  int device = -1;
  std::string why;
  if (source && static_cast<int>(source->pieces().size()) >= last &&
      static_cast<int>(call->recv.pieces().size()) == shape.recv_pieces && movable(*source) &&
      movable(call->recv) && (device = call_device(*source, call->recv)) >= 0) {
    // The wire holds the pieces it sends at their places in the side's packed layout.
    std::int64_t end = 1;
    for (int k = first; k < last; ++k) {
      const Piece& piece = source->pieces()[k];
      if (!private_own(k) && piece.bytes() > 0) end = std::max(end, piece.offset + piece.bytes());
    }
    const auto bytes = static_cast<std::size_t>(end);
    if (acquire_wire(WireMemory::Device, device, bytes, wire, why) &&
        export_wire(wire, handle, why)) {
      const auto wire_bytes = static_cast<std::int64_t>(wire.block.capacity);
      for (int k = first; k < last; ++k) {
        const Piece& piece = source->pieces()[k];
        out[k - first] = {1,          me,    piece.offset, private_own(k) ? 0 : piece.bytes(),
                          wire_bytes, handle};
      }
    } else {
      wire = WireBuffer{};
    }
  }
  // A failed exchange (the MPI's error handler returned) still votes below, so that no rank
  // leaves the others waiting in the vote.
  const bool exchanged = exchange_records(comm, shape, out, in) == MPI_SUCCESS;

  // Step 3: map the wires, check the sizes, pack.
  std::vector<const std::byte*> sources(in.size(), nullptr);
  Pinned pinned;
  int ready = exchanged && wire.data() != nullptr;
  for (int j = 0; j < shape.recv_records && ready; ++j) {
    const Record& r = in[j];
    if (j == shape.own_recv || r.ready == kNoSender) continue;
    if (j >= shape.recv_pieces) {  // a slot with no piece: only an in-place root's own
      ready = 0;
      break;
    }
    if (r.ready != 1 || r.bytes != call->recv.pieces()[j].bytes()) {
      ready = 0;
      break;
    }
    if (r.bytes == 0) continue;
    std::byte* base = wire.data();
    if (r.sender != me) {
      base = import_wire(r.wire, static_cast<std::size_t>(r.wire_bytes), device, why);
      if (!base) {
        ready = 0;
        break;
      }
      pinned.mapped.push_back(base);
    }
    sources[j] = base + r.offset;
  }
  const bool copy_own = shape.copy_own && shape.own_send >= 0 && shape.own_recv >= 0;
  if (ready && copy_own &&
      call->send.pieces()[shape.own_send].bytes() != call->recv.pieces()[shape.own_recv].bytes()) {
    ready = 0;
  }
  if (ready) {
    std::vector<Piece> outgoing = source->pieces();
    for (int k = 0; k < static_cast<int>(outgoing.size()); ++k) {
      outgoing[k].skip = k < first || k >= last || private_own(k);
    }
    if (pack_batch(outgoing, wire_view(wire, Method::Device), comm) != MPI_SUCCESS) ready = 0;
  }
  int all_ready = 0;
  if (PMPI_Allreduce(&ready, &all_ready, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) all_ready = 0;
  if (!all_ready) {
    if (!why.empty()) {
      runtime::log(runtime::LogLevel::Info, "same-node collective not taken: %s", why.c_str());
    }
    return false;
  }

  // Step 4: unpack from the wires, the own piece straight across, in one kernel; the barrier.
  std::vector<Piece> incoming = call->recv.pieces();
  for (int j = 0; j < static_cast<int>(incoming.size()); ++j) {
    incoming[j].skip = j == shape.own_recv || in[j].ready == kNoSender;
  }
  const Piece* own_from = copy_own ? &call->send.pieces()[shape.own_send] : nullptr;
  const Piece* own_to = copy_own ? &call->recv.pieces()[shape.own_recv] : nullptr;
  rc = unpack_batch_from(incoming, sources, own_from, own_to, device, comm);
  if (PMPI_Barrier(comm) != MPI_SUCCESS && rc == MPI_SUCCESS) {
    rc = report_error(comm, "same-node collective", "the closing barrier failed");
  }
  if (rc == MPI_SUCCESS) {
    counters().collectives_served++;
    counters().collectives_same_node++;
  }
  return true;
}

void free_same_node_keyval() {
  std::lock_guard lock(g_keyval_mutex);
  if (g_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&g_keyval);
  g_keyval = MPI_KEYVAL_INVALID;
}

}  // namespace strider::transfer::collective
