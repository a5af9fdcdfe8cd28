#include "transfer/collective/same_node.hpp"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "engine/cuda/batch_plan.hpp"
#include "engine/cuda/gpu_engine.hpp"
#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "runtime/node_comm.hpp"
#include "transfer/collective/batch.hpp"
#include "transfer/collective/peer_mappings.hpp"
#include "transfer/direct_object.hpp"
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
  delete static_cast<SameNodeVerdict*>(value);
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

}  // namespace

SameNodeVerdict same_node_verdict(MPI_Comm comm, int size) {
  const int key = keyval();
  if (key == MPI_KEYVAL_INVALID) return {};  // every rank alike: the MPI refused a key
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, key, &value, &found) == MPI_SUCCESS && found) {
    return *static_cast<SameNodeVerdict*>(value);
  }
  const bool gpu = runtime::config().same_node && engine::cuda::device_count() > 0;
  // MIN over {same node, GPU fingerprint, its complement}: all on one node, and the smallest
  // and (complemented) largest fingerprint, equal when every rank has the same GPU.
  std::uint64_t mine[3] = {gpu ? 1u : 0u, 0, 0};
  if (gpu) mine[1] = engine::cuda::device_fingerprint(engine::cuda::current_device());
  mine[2] = ~mine[1];
  MPI_Comm node = MPI_COMM_NULL;
  int node_size = 0;
  if (runtime::node_communicator(comm, &node) != MPI_SUCCESS ||
      PMPI_Comm_size(node, &node_size) != MPI_SUCCESS || node_size != size) {
    mine[0] = 0;
  }
  if (node != MPI_COMM_NULL) PMPI_Comm_free(&node);
  std::uint64_t all[3] = {0, 0, 0};
  if (PMPI_Allreduce(mine, all, 3, MPI_UINT64_T, MPI_MIN, comm) != MPI_SUCCESS) all[0] = 0;
  SameNodeVerdict verdict;
  verdict.same_node = all[0] != 0;
  verdict.one_gpu = verdict.same_node && all[1] != 0 && all[1] == ~all[2];
  PMPI_Comm_set_attr(comm, key, new SameNodeVerdict(verdict));
  return verdict;
}

namespace {

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
  std::int64_t direct = 0;     // 1: read in place from the sender's buffer, as `layout` says
  std::int64_t own_piece = 0;  // direct: the sender's piece index (for its own records)
  DirectLayout layout;
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

// Whether `piece` is to be read in place rather than through the wire (filling `layout` and
// this rank's `bases` of its allocations).
bool read_in_place(const Piece& piece, bool one_gpu, CallExports& exports, DirectLayout& layout,
                   AllocationBases& bases, std::string& why) {
  if (!runtime::config().same_node_direct || piece.bytes() == 0 || !piece.object.plan) {
    return false;
  }
  // Too many segments first: it is asked at every call, and an irregular type has many pieces.
  // Dense elements count as one block: a contiguous piece of 4-byte ints is one block.
  const plan::Plan& plan = *piece.object.plan;
  const std::int64_t count = piece.object.count;
  if (!flattens_within(plan.form, plan.bounds.extent, count, DirectPolicy::kMaxSegments) ||
      (!one_gpu &&
       !blocks_at_least(plan.form, plan.bounds.extent, count, min_block_across_gpus()))) {
    return false;
  }
  return describe_in_place(piece.object, exports, layout, bases, why);
}

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
      PMPI_Comm_rank(comm, &me) != MPI_SUCCESS) {
    return false;
  }
  const SameNodeVerdict verdict = same_node_verdict(comm, size);
  if (!verdict.same_node) return false;
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
  bool taking_part = false;
  std::vector<char> in_place(out.size(), 0);           // send pieces its readers take in place
  std::vector<AllocationBases> own_bases(out.size());  // their allocations, as this rank sees them
  std::string why;
  if (source && static_cast<int>(source->pieces().size()) >= last &&
      static_cast<int>(call->recv.pieces().size()) == shape.recv_pieces && movable(*source) &&
      movable(call->recv) && (device = call_device(*source, call->recv)) >= 0) {
    // Pieces read in place need no wire (not in place: a rank overwrites its receive side while
    // its peers would still read it); the wire holds the others at their places in the side's
    // packed layout.
    std::int64_t end = 0;
    CallExports exports;
    for (int k = first; k < last; ++k) {
      const Piece& piece = source->pieces()[k];
      if (private_own(k) || piece.bytes() == 0) continue;
      std::string not_in_place;
      if (!shape.source_is_recv &&
          read_in_place(piece, verdict.one_gpu, exports, out[k - first].layout,
                        own_bases[k - first], not_in_place)) {
        in_place[k - first] = 1;
        continue;
      }
      if (!not_in_place.empty()) {
        runtime::log(runtime::LogLevel::Debug,
                     "same-node collective: piece %d through the wire: %s", k,
                     not_in_place.c_str());
      }
      end = std::max(end, piece.offset + piece.bytes());
    }
    taking_part = end == 0 || (acquire_wire(WireMemory::Device, device,
                                            static_cast<std::size_t>(end), wire, why) &&
                               export_wire(wire, handle, why));
    // Pieces read in place hold what the application queued on the default stream only once
    // that work is done: a pack would have been ordered after it, a peer's kernel is not.
    if (taking_part && std::find(in_place.begin(), in_place.end(), 1) != in_place.end() &&
        engine::cuda::settle_default_stream(device, why) != engine::cuda::Outcome::Done) {
      taking_part = false;
    }
    if (taking_part) {
      const auto wire_bytes = wire.data() ? static_cast<std::int64_t>(wire.block.capacity) : 0;
      for (int k = first; k < last; ++k) {
        const Piece& piece = source->pieces()[k];
        Record& r = out[k - first];
        r.ready = 1;
        r.sender = me;
        r.bytes = private_own(k) ? 0 : piece.bytes();
        if (in_place[k - first]) {
          r.direct = 1;
          r.own_piece = k;
        } else {
          r.offset = piece.offset;
          r.wire_bytes = wire_bytes;
          r.wire = handle;
        }
      }
    } else {
      wire = WireBuffer{};
    }
  }
  // A failed exchange (the MPI's error handler returned) still votes below, so that no rank
  // leaves the others waiting in the vote.
  const bool exchanged = exchange_records(comm, shape, out, in) == MPI_SUCCESS;

  // Step 3: map the wires and the buffers read in place, check the sizes, pack.
  std::vector<engine::cuda::BatchSide> sources(in.size());
  // The mapped forms of the pieces read in place (sources point into them).
  std::vector<std::shared_ptr<const MappedForm>> forms(in.size());
  PeerMappings imported;
  int ready = exchanged && taking_part;
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
    if (r.direct) {
      if (!consistent(r.layout, r.bytes) ||
          (r.sender == me &&
           (r.own_piece < first || r.own_piece >= last || !in_place[r.own_piece - first]))) {
        ready = 0;
        break;
      }
      AllocationBases bases{};
      if (r.sender == me) {
        bases = own_bases[r.own_piece - first];
      } else {
        for (std::int64_t a = 0; a < r.layout.allocations && ready; ++a) {
          const SharedAllocation& shared = r.layout.allocation[a];
          bases[a] = imported.map(shared.handle, shared.bytes, device, why);
          if (!bases[a]) ready = 0;
        }
        if (!ready) break;
      }
      forms[j] = mapped_form_of(r.layout, bases);
      sources[j] = {&forms[j]->form, 0, &forms[j]->state, 1, const_cast<std::byte*>(bases[0])};
      continue;
    }
    std::byte* base = wire.data();
    if (r.sender != me) base = imported.map(r.wire, r.wire_bytes, device, why);
    if (!base) {
      ready = 0;
      break;
    }
    sources[j] = {nullptr, 0, nullptr, r.bytes, base + r.offset};
  }
  const bool copy_own = shape.copy_own && shape.own_send >= 0 && shape.own_recv >= 0;
  if (ready && copy_own &&
      call->send.pieces()[shape.own_send].bytes() != call->recv.pieces()[shape.own_recv].bytes()) {
    ready = 0;
  }
  if (ready && wire.data()) {
    std::vector<Piece> outgoing = source->pieces();
    for (int k = 0; k < static_cast<int>(outgoing.size()); ++k) {
      outgoing[k].skip = k < first || k >= last || private_own(k) || in_place[k - first];
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

  // Step 4: unpack from the wires and copy the pieces read in place and the own piece, layout
  // to layout, in one kernel; the barrier, after which no peer reads this rank's memory.
  std::vector<Piece> incoming = call->recv.pieces();
  std::uint64_t read_in_place_count = 0;
  for (int j = 0; j < static_cast<int>(incoming.size()); ++j) {
    incoming[j].skip = j == shape.own_recv || in[j].ready == kNoSender;
    if (!incoming[j].skip && in[j].direct && incoming[j].bytes() > 0) ++read_in_place_count;
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
    counters().collective_pieces_in_place += read_in_place_count;
  }
  return true;
}

void free_same_node_keyval() {
  std::lock_guard lock(g_keyval_mutex);
  if (g_keyval != MPI_KEYVAL_INVALID) PMPI_Comm_free_keyval(&g_keyval);
  g_keyval = MPI_KEYVAL_INVALID;
}

}  // namespace strider::transfer::collective
