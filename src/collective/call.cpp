#include "collective/call.hpp"

#include <algorithm>

#include "collective/batch.hpp"
#include "transfer/staged.hpp"

namespace strider::collective {

bool describe_sides(Call& call, const void* sbuf, const void* rbuf,
                    std::span<const PieceSpec> send_specs, std::span<const PieceSpec> recv_specs) {
  if (!call.recv.describe(rbuf, recv_specs)) return false;
  if (sbuf == MPI_IN_PLACE) return call.recv.converted();
  if (!call.send.describe(sbuf, send_specs)) return false;
  return call.send.converted() || call.recv.converted();
}

bool group_of(MPI_Comm comm, Group& out, int& rejected) {
  rejected = MPI_SUCCESS;
  if (comm == MPI_COMM_NULL) return false;
  int inter = 0;
  rejected = PMPI_Comm_test_inter(comm, &inter);
  if (rejected != MPI_SUCCESS) return false;
  out.inter = inter != 0;
  rejected = PMPI_Comm_rank(comm, &out.rank);
  if (rejected != MPI_SUCCESS) return false;
  rejected = out.inter ? PMPI_Comm_remote_size(comm, &out.size) : PMPI_Comm_size(comm, &out.size);
  return rejected == MPI_SUCCESS;
}

int wire_args(Call& call, Side& side, bool bytes, WireArgs& out) {
  const std::size_t n = side.pieces().size();
  out.buffer = side.wire();
  // Never empty: an MPI may reject a null array even for no neighbours.
  const std::size_t size = std::max<std::size_t>(n, 1);
  out.counts.assign(size, 0);
  out.types.assign(size, MPI_BYTE);
  if (bytes) {
    out.byte_displacements.assign(size, 0);
  } else {
    out.displacements.assign(size, 0);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const bool ok = bytes
                        ? side.wire_bytes(i, out.counts[i], out.byte_displacements[i], out.types[i])
                        : side.wire_count(i, out.counts[i], out.displacements[i], out.types[i]);
    if (!ok) {
      PMPI_Comm_call_errhandler(call.comm, MPI_ERR_COUNT);
      return MPI_ERR_COUNT;
    }
  }
  return MPI_SUCCESS;
}

void copy_own_piece(Call& call, int send_piece, int recv_piece, bool send_too) {
  if (!call.send.converted() || !call.recv.converted()) return;
  // Sizes that differ are an error the MPI reports: leave the pieces to it.
  if (call.send.pieces()[send_piece].bytes() != call.recv.pieces()[recv_piece].bytes()) return;
  call.self_send = send_piece;
  call.self_recv = recv_piece;
  call.send.pieces()[send_piece].skip = send_too;
  call.recv.pieces()[recv_piece].skip = true;
}

int acquire(Call& call) {
  if (call.send.converted()) {
    if (const int rc = call.send.acquire(call.comm, false)) return rc;
  }
  if (call.recv.converted()) {
    if (const int rc = call.recv.acquire(call.comm, true)) return rc;
  }
  for (Mirror& m : call.mirrors) {
    if (const int rc = m.acquire(call.comm, call.nonblocking)) return rc;
  }
  return MPI_SUCCESS;
}

int start(Call& call) {
  if (const int rc = acquire(call)) return rc;
  return load(call);
}

int load(Call& call) {
  if (call.send.converted()) {
    if (const int rc = call.send.pack(call.comm)) return rc;
  }
  if (call.recv.converted()) {
    if (const int rc = call.recv.preload(call.comm)) return rc;
  }
  if (call.self_send >= 0) {
    const Piece& from = call.send.pieces()[call.self_send];
    const Piece& to = call.recv.pieces()[call.self_recv];
    if (from.bytes() > 0) {
      if (const int rc = collective::copy_piece(from.object, to.object, call.comm)) return rc;
    }
  }
  for (Mirror& m : call.mirrors) {
    if (const int rc = m.load(call.comm)) return rc;
  }
  return MPI_SUCCESS;
}

int finish(Call& call) {
  if (call.recv.converted()) {
    if (const int rc = call.recv.unpack(call.comm)) return rc;
  }
  for (Mirror& m : call.mirrors) {
    if (const int rc = m.store(call.comm)) return rc;
  }
  return MPI_SUCCESS;
}

int CollectiveOperation::observe_complete(MPI_Status&) {
  if (!finished_) {
    finished_ = true;
    finish_rc_ = finish(*call_);
  }
  return finish_rc_;
}

int CollectiveOperation::complete(MPI_Status& status, int error) {
  if (error != MPI_SUCCESS) return MPI_SUCCESS;  // the MPI's error is the call's
  return observe_complete(status);
}

}  // namespace strider::collective
