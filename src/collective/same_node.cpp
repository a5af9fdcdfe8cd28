#include "collective/same_node.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "collective/batch.hpp"
#include "collective/peer_mappings.hpp"
#include "engine/cuda/batch_plan.hpp"
#include "engine/cuda/gpu_engine.hpp"
#include "ipc/wire_ipc.hpp"
#include "runtime/attribute_key.hpp"
#include "runtime/log.hpp"
#include "runtime/node_comm.hpp"
#include "transfer/direct_object.hpp"
#include "transfer/settings.hpp"
#include "transfer/staged.hpp"
#include "transfer/state.hpp"
#include "transfer/wire_view.hpp"

namespace strider::collective {
namespace {

// ---- step 1: the communicator's verdict, cached as an attribute -----------------------------

int delete_verdict(MPI_Comm, int, void* value, void*) {
  delete static_cast<SameNodeVerdict*>(value);
  return MPI_SUCCESS;
}

// The verdicts' key on communicators; a duplicate asks again (the null copy function).
runtime::AttributeKey<runtime::AttributeOf::Comm>& verdict_key() {
  static runtime::AttributeKey<runtime::AttributeOf::Comm> key(MPI_COMM_NULL_COPY_FN,
                                                               delete_verdict);
  return key;
}

}  // namespace

SameNodeVerdict same_node_verdict(MPI_Comm comm, int size) {
  const int key = verdict_key().get();
  if (key == MPI_KEYVAL_INVALID) return {};  // every rank alike: the MPI refused a key
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, key, &value, &found) == MPI_SUCCESS && found) {
    return *static_cast<SameNodeVerdict*>(value);
  }
  const bool gpu = transfer::settings().same_node && engine::cuda::device_count() > 0;
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
  ipc::WireHandle wire;
  std::int64_t direct = 0;     // 1: read in place from the sender's buffer, as `layout` says
  std::int64_t own_piece = 0;  // direct: the sender's piece index (for its own records)
  ipc::DirectLayout layout;
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
bool read_in_place(const Piece& piece, bool one_gpu, transfer::CallExports& exports,
                   ipc::DirectLayout& layout, transfer::AllocationBases& bases, std::string& why) {
  if (!transfer::settings().same_node_direct || piece.bytes() == 0 || !piece.object.plan) {
    return false;
  }
  // Too many segments first: it is asked at every call, and an irregular type has many pieces.
  // Dense elements count as one block: a contiguous piece of 4-byte ints is one block.
  const plan::Plan& plan = *piece.object.plan;
  const std::int64_t count = piece.object.count;
  if (!ipc::flattens_within(plan.form, plan.bounds.extent, count,
                            ipc::DirectPolicy::kMaxSegments) ||
      (!one_gpu &&
       !ipc::blocks_at_least(plan.form, plan.bounds.extent, count, ipc::min_block_across_gpus()))) {
    return false;
  }
  return transfer::describe_in_place(piece.object, exports, layout, bases, why);
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

// One blocking call's run through the protocol's steps 2 to 4 (same_node.hpp) on this rank.
// Every rank of the communicator makes one and runs it to the vote, also a rank that will not
// take part (no call: it forwards), so that no rank is left waiting in a collective.
class SameNodeRun {
 public:
  SameNodeRun(MPI_Comm comm, const SameNodeShape& shape, Call* call, int me, bool one_gpu)
      : comm_(comm),
        shape_(shape),
        call_(call),
        me_(me),
        one_gpu_(one_gpu),
        first_(shape.source_first),
        last_(shape.source_first + shape.send_records),
        source_(call ? (shape.source_is_recv ? &call->recv : &call->send) : nullptr),
        out_(static_cast<std::size_t>(shape.send_records)),
        in_(static_cast<std::size_t>(shape.recv_records)),
        in_place_(out_.size(), 0),
        own_bases_(out_.size()),
        sources_(in_.size()),
        forms_(in_.size()) {
    for (Record& r : in_) r.ready = kNoSender;
  }

  // Step 2: this rank's records, ready where it takes part, then exchanged. False when the
  // exchange failed (the MPI's error handler returned): the rank still votes, not ready.
  bool offer() {
    if (can_take_part()) describe_records();
    return exchange_records(comm_, shape_, out_, in_) == MPI_SUCCESS;
  }

  // Step 3: maps the wires and the buffers read in place, checks the sizes, packs this rank's
  // wire. 1 when ready.
  int prepare() {
    if (!taking_part_) return 0;
    for (int j = 0; j < shape_.recv_records; ++j) {
      if (!map_record(j)) return 0;
    }
    const bool copy_own = copies_own();
    if (copy_own && call_->send.pieces()[shape_.own_send].bytes() !=
                        call_->recv.pieces()[shape_.own_recv].bytes()) {
      return 0;
    }
    if (wire_.data()) {
      std::vector<Piece> outgoing = source_->pieces();
      for (int k = 0; k < static_cast<int>(outgoing.size()); ++k) {
        outgoing[k].skip = k < first_ || k >= last_ || private_own(k) || in_place_[k - first_];
      }
      if (pack_batch(outgoing, transfer::wire_view(wire_, transfer::Method::Device), comm_) !=
          MPI_SUCCESS) {
        return 0;
      }
    }
    return 1;
  }

  // Step 4: unpacks from the wires and copies the pieces read in place and the own piece,
  // layout to layout, in one kernel; then the barrier, after which no peer reads this rank's
  // memory. The call's result.
  int move() {
    std::vector<Piece> incoming = call_->recv.pieces();
    std::uint64_t read_in_place = 0;
    for (int j = 0; j < static_cast<int>(incoming.size()); ++j) {
      incoming[j].skip = j == shape_.own_recv || in_[j].ready == kNoSender;
      if (!incoming[j].skip && in_[j].direct && incoming[j].bytes() > 0) ++read_in_place;
    }
    const bool copy_own = copies_own();
    const Piece* own_from = copy_own ? &call_->send.pieces()[shape_.own_send] : nullptr;
    const Piece* own_to = copy_own ? &call_->recv.pieces()[shape_.own_recv] : nullptr;
    int rc = unpack_batch_from(incoming, sources_, own_from, own_to, device_, comm_);
    if (PMPI_Barrier(comm_) != MPI_SUCCESS && rc == MPI_SUCCESS) {
      rc = transfer::report_error(comm_, "same-node collective", "the closing barrier failed");
    }
    if (rc == MPI_SUCCESS) {
      transfer::counters().collectives_served++;
      transfer::counters().collectives_same_node++;
      transfer::counters().collective_pieces_in_place += read_in_place;
    }
    return rc;
  }

  const std::string& why() const { return why_; }

 private:
  bool private_own(int k) const { return shape_.own_send_private && k == shape_.own_send; }
  bool copies_own() const {
    return shape_.copy_own && shape_.own_send >= 0 && shape_.own_recv >= 0;
  }

  // Whether the call's sides are this rank's to move GPU to GPU, on one device (device_).
  bool can_take_part() {
    return source_ && static_cast<int>(source_->pieces().size()) >= last_ &&
           static_cast<int>(call_->recv.pieces().size()) == shape_.recv_pieces &&
           movable(*source_) && movable(call_->recv) &&
           (device_ = call_device(*source_, call_->recv)) >= 0;
  }

  // Pieces read in place need no wire (not in place: a rank overwrites its receive side while
  // its peers would still read it); the wire holds the others at their places in the side's
  // packed layout.
  void describe_records() {
    std::int64_t end = 0;
    transfer::CallExports exports;
    for (int k = first_; k < last_; ++k) {
      const Piece& piece = source_->pieces()[k];
      if (private_own(k) || piece.bytes() == 0) continue;
      std::string not_in_place;
      if (!shape_.source_is_recv && read_in_place(piece, one_gpu_, exports, out_[k - first_].layout,
                                                  own_bases_[k - first_], not_in_place)) {
        in_place_[k - first_] = 1;
        continue;
      }
      if (!not_in_place.empty()) {
        runtime::log(runtime::LogLevel::Debug,
                     "same-node collective: piece %d through the wire: %s", k,
                     not_in_place.c_str());
      }
      end = std::max(end, piece.offset + piece.bytes());
    }
    bool taking_part = end == 0 || (ipc::acquire_wire(ipc::WireMemory::Device, device_,
                                                      static_cast<std::size_t>(end), wire_, why_) &&
                                    ipc::export_wire(wire_, handle_, why_));
    // Pieces read in place hold what the application queued on the default stream only once
    // that work is done: a pack would have been ordered after it, a peer's kernel is not.
    if (taking_part && std::find(in_place_.begin(), in_place_.end(), 1) != in_place_.end() &&
        engine::cuda::settle_default_stream(device_, why_) != engine::cuda::Outcome::Done) {
      taking_part = false;
    }
    if (!taking_part) {
      wire_ = ipc::WireBuffer{};
      return;
    }
    const auto wire_bytes = wire_.data() ? static_cast<std::int64_t>(wire_.block.capacity) : 0;
    for (int k = first_; k < last_; ++k) {
      Record& r = out_[k - first_];
      r.ready = 1;
      r.sender = me_;
      r.bytes = private_own(k) ? 0 : source_->pieces()[k].bytes();
      if (in_place_[k - first_]) {
        r.direct = 1;
        r.own_piece = k;
      } else {
        r.offset = source_->pieces()[k].offset;
        r.wire_bytes = wire_bytes;
        r.wire = handle_;
      }
    }
    taking_part_ = true;
  }

  // Receive slot `j`: its sender's wire or buffers mapped as the slot's source. False when the
  // rank cannot take part.
  bool map_record(int j) {
    const Record& r = in_[j];
    if (j == shape_.own_recv || r.ready == kNoSender) return true;
    if (j >= shape_.recv_pieces) return false;  // a slot with no piece: an in-place root's own
    if (r.ready != 1 || r.bytes != call_->recv.pieces()[j].bytes()) return false;
    if (r.bytes == 0) return true;
    if (r.direct) return map_in_place(r, j);
    std::byte* base =
        r.sender == me_ ? wire_.data() : imported_.map(r.wire, r.wire_bytes, device_, why_);
    if (!base) return false;
    sources_[j] = {nullptr, 0, nullptr, r.bytes, base + r.offset};
    return true;
  }

  // A piece read in place, from the sender's allocations in its own layout.
  bool map_in_place(const Record& r, int j) {
    if (!ipc::consistent(r.layout, r.bytes)) return false;
    transfer::AllocationBases bases{};
    if (r.sender == me_) {
      if (r.own_piece < first_ || r.own_piece >= last_ || !in_place_[r.own_piece - first_]) {
        return false;
      }
      bases = own_bases_[r.own_piece - first_];
    } else {
      for (std::int64_t a = 0; a < r.layout.allocations; ++a) {
        const ipc::SharedAllocation& shared = r.layout.allocation[a];
        bases[a] = imported_.map(shared.handle, shared.bytes, device_, why_);
        if (!bases[a]) return false;
      }
    }
    forms_[j] = transfer::mapped_form_of(r.layout, bases);
    sources_[j] = {&forms_[j]->form, 0, &forms_[j]->state, 1, const_cast<std::byte*>(bases[0])};
    return true;
  }

  MPI_Comm comm_;
  const SameNodeShape& shape_;
  Call* call_;
  int me_;
  bool one_gpu_;
  int first_, last_;  // this rank's source pieces: its records
  Side* source_;
  std::vector<Record> out_, in_;
  std::vector<char> in_place_;                        // source pieces read in place
  std::vector<transfer::AllocationBases> own_bases_;  // their allocations, here
  ipc::WireBuffer wire_;
  ipc::WireHandle handle_;
  int device_ = -1;
  bool taking_part_ = false;
  std::string why_;
  std::vector<engine::cuda::BatchSide> sources_;  // per receive slot
  // The mapped forms of the pieces read in place (sources_ point into them).
  std::vector<std::shared_ptr<const transfer::MappedForm>> forms_;
  PeerMappings imported_;  // unpinned when the run ends, after the last kernel
};

}  // namespace

bool same_node_collective(MPI_Comm comm, const SameNodeShape& shape, Call* call, int& rc) {
  // Off on every rank alike (the setting must match), so no rank asks.
  if (!transfer::settings().same_node) return false;
  int inter = 0, size = 0, me = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) return false;
  if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size < 2 ||
      PMPI_Comm_rank(comm, &me) != MPI_SUCCESS) {
    return false;
  }
  const SameNodeVerdict verdict = same_node_verdict(comm, size);
  if (!verdict.same_node) return false;
  SameNodeRun run(comm, shape, call, me, verdict.one_gpu);
  const int ready = run.offer() ? run.prepare() : 0;
  int all_ready = 0;
  if (PMPI_Allreduce(&ready, &all_ready, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) all_ready = 0;
  if (!all_ready) {
    if (!run.why().empty()) {
      runtime::log(runtime::LogLevel::Info, "same-node collective not taken: %s",
                   run.why().c_str());
    }
    return false;
  }
  rc = run.move();
  return true;
}

void free_same_node_keyval() { verdict_key().free(); }

}  // namespace strider::collective
