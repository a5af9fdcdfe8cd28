// Alltoall, Alltoallv, Alltoallw: a piece per peer on each side. With MPI_IN_PLACE the send
// pieces are the receive pieces; the wires are never in place, so the MPI sees an ordinary call.
// Blocking calls on one node first try GPU to GPU (same_node.hpp), which every rank must ask.
#include <climits>

#include "transfer/collective/call.hpp"
#include "transfer/collective/collectives.hpp"
#include "transfer/collective/same_node.hpp"
#include "transfer/collective/specs.hpp"
#include "transfer/next.hpp"
#include "transfer/state.hpp"

namespace strider::transfer::collective {
namespace {

// Describes the sides; false to forward. In place there is no send side: the receive pieces
// are packed into the receive wire first and the MPI gets MPI_IN_PLACE, as every rank must.
bool describe_sides(Call& call, const void* sbuf, void* rbuf,
                    const std::vector<PieceSpec>& send_specs,
                    const std::vector<PieceSpec>& recv_specs) {
  if (!call.recv.describe(rbuf, recv_specs)) return false;
  if (sbuf == MPI_IN_PLACE) return call.recv.converted();
  if (!call.send.describe(sbuf, send_specs)) return false;
  return call.send.converted() || call.recv.converted();
}

// The own piece: in place it stays where it is (the MPI leaves it alone), else it is copied
// directly (intracommunicators only: an intercommunicator's pieces are the remote group's).
void own_piece(Call& call, const Group& g, bool in_place) {
  if (g.inter) return;
  if (in_place) {
    for (Piece& p : call.recv.pieces()) p.preload = true;
    call.recv.pieces()[g.rank].preload = false;
    call.recv.pieces()[g.rank].skip = true;
    return;
  }
  copy_own_piece(call, g.rank, g.rank);
}

// Blocking calls on an intracommunicator: GPU to GPU when every rank can (same_node.hpp).
bool try_same_node(MPI_Comm comm, const Group& g, Call* call, bool in_place, MPI_Request* request,
                   int& rc) {
  if (request || g.inter) return false;
  SameNodeShape shape;
  shape.exchange = SameNodeShape::Exchange::Alltoall;
  shape.send_records = shape.recv_records = shape.recv_pieces = g.size;
  shape.source_is_recv = in_place;
  shape.own_send = shape.own_recv = g.rank;
  shape.copy_own = !in_place;
  shape.own_send_private = true;
  return same_node_collective(comm, shape, call, rc);
}

}  // namespace

int alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
             MPI_Datatype rtype, MPI_Comm comm, MPI_Request* request) {
  const auto forward = [&] {
    counters().collectives_forwarded++;
    return request ? STRIDER_NEXT(MPI_Ialltoall)(sbuf, scount, stype, rbuf, rcount, rtype, comm,
                                                 request)
                   : STRIDER_NEXT(MPI_Alltoall)(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  };
  Group g;
  if (strider_off() || !group_of(comm, g)) return forward();
  const bool in_place = sbuf == MPI_IN_PLACE;
  if (in_place && g.inter) return forward();  // erroneous: the MPI reports it
  std::vector<PieceSpec> send_specs, recv_specs;
  auto call = std::make_unique<Call>(comm);
  const bool served = uniform_specs(g.size, rcount, rtype, recv_specs) &&
                      (in_place || uniform_specs(g.size, scount, stype, send_specs)) &&
                      describe_sides(*call, sbuf, rbuf, send_specs, recv_specs);
  if (served) own_piece(*call, g, in_place);
  if (int rc = 0; try_same_node(comm, g, served ? call.get() : nullptr, in_place, request, rc)) {
    return rc;
  }
  if (!served) return forward();
  Call& c = *call;
  return serve(std::move(call), request, [&](MPI_Request* r) {
    const Uniform s = uniform_args(c.send, sbuf, scount, stype);
    const Uniform d = uniform_args(c.recv, rbuf, rcount, rtype);
    return r ? STRIDER_NEXT(MPI_Ialltoall)(s.buffer, s.count, s.type, d.buffer, d.count, d.type,
                                           comm, r)
             : STRIDER_NEXT(MPI_Alltoall)(s.buffer, s.count, s.type, d.buffer, d.count, d.type,
                                          comm);
  });
}

int alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
              void* rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
              MPI_Comm comm, MPI_Request* request) {
  const auto forward = [&] {
    counters().collectives_forwarded++;
    return request ? STRIDER_NEXT(MPI_Ialltoallv)(sbuf, scounts, sdispls, stype, rbuf, rcounts,
                                                  rdispls, rtype, comm, request)
                   : STRIDER_NEXT(MPI_Alltoallv)(sbuf, scounts, sdispls, stype, rbuf, rcounts,
                                                 rdispls, rtype, comm);
  };
  Group g;
  if (strider_off() || !group_of(comm, g)) return forward();
  const bool in_place = sbuf == MPI_IN_PLACE;
  if (in_place && g.inter) return forward();  // erroneous: the MPI reports it
  std::vector<PieceSpec> send_specs, recv_specs;
  auto call = std::make_unique<Call>(comm);
  const bool served = varying_specs(g.size, rcounts, rdispls, rtype, recv_specs) &&
                      (in_place || varying_specs(g.size, scounts, sdispls, stype, send_specs)) &&
                      describe_sides(*call, sbuf, rbuf, send_specs, recv_specs);
  if (served) own_piece(*call, g, in_place);
  if (int rc = 0; try_same_node(comm, g, served ? call.get() : nullptr, in_place, request, rc)) {
    return rc;
  }
  if (!served) return forward();
  Call& c = *call;
  Varying s{}, d{};
  if (const int rc = varying_args(c, c.send, c.send_args, scounts, sdispls, stype, s)) return rc;
  if (const int rc = varying_args(c, c.recv, c.recv_args, rcounts, rdispls, rtype, d)) return rc;
  return serve(std::move(call), request, [&](MPI_Request* r) {
    void* sb = wire_or(c.send, sbuf);
    void* db = wire_or(c.recv, rbuf);
    return r ? STRIDER_NEXT(MPI_Ialltoallv)(sb, s.counts, s.displs, s.type, db, d.counts, d.displs,
                                            d.type, comm, r)
             : STRIDER_NEXT(MPI_Alltoallv)(sb, s.counts, s.displs, s.type, db, d.counts, d.displs,
                                           d.type, comm);
  });
}

int alltoallw(const void* sbuf, const int scounts[], const int sdispls[],
              const MPI_Datatype stypes[], void* rbuf, const int rcounts[], const int rdispls[],
              const MPI_Datatype rtypes[], MPI_Comm comm, MPI_Request* request) {
  const auto forward = [&] {
    counters().collectives_forwarded++;
    return request ? STRIDER_NEXT(MPI_Ialltoallw)(sbuf, scounts, sdispls, stypes, rbuf, rcounts,
                                                  rdispls, rtypes, comm, request)
                   : STRIDER_NEXT(MPI_Alltoallw)(sbuf, scounts, sdispls, stypes, rbuf, rcounts,
                                                 rdispls, rtypes, comm);
  };
  Group g;
  if (strider_off() || !group_of(comm, g)) return forward();
  const bool in_place = sbuf == MPI_IN_PLACE;
  if (in_place && g.inter) return forward();
  if (negative(g.size, rcounts) || (!in_place && negative(g.size, scounts))) return forward();
  std::vector<PieceSpec> send_specs, recv_specs;
  typed_specs(g.size, rcounts, rdispls, rtypes, recv_specs);
  if (!in_place) typed_specs(g.size, scounts, sdispls, stypes, send_specs);
  auto call = std::make_unique<Call>(comm);
  const bool served = describe_sides(*call, sbuf, rbuf, send_specs, recv_specs);
  if (served) own_piece(*call, g, in_place);
  if (int rc = 0; try_same_node(comm, g, served ? call.get() : nullptr, in_place, request, rc)) {
    return rc;
  }
  if (!served) return forward();
  Call& c = *call;
  // The wire's byte displacements as ints (the -w forms of MPI-3 take int displacements).
  std::vector<int> send_displs, recv_displs;
  const auto w_args = [&](Side& side, WireArgs& wire, std::vector<int>& displs) {
    if (const int rc = wire_args(c, side, true, wire)) return rc;
    displs.resize(wire.byte_displacements.size());
    for (std::size_t i = 0; i < displs.size(); ++i) {
      if (wire.byte_displacements[i] > INT_MAX) {
        PMPI_Comm_call_errhandler(comm, MPI_ERR_COUNT);
        return MPI_ERR_COUNT;
      }
      displs[i] = static_cast<int>(wire.byte_displacements[i]);
    }
    return MPI_SUCCESS;
  };
  if (c.send.converted()) {
    if (const int rc = w_args(c.send, c.send_args, c.send_args.displacements)) return rc;
  }
  if (c.recv.converted()) {
    if (const int rc = w_args(c.recv, c.recv_args, c.recv_args.displacements)) return rc;
  }
  return serve(std::move(call), request, [&](MPI_Request* r) {
    const bool sw = c.send.converted(), rw = c.recv.converted();
    const void* s = sw ? c.send.wire() : (in_place ? MPI_IN_PLACE : sbuf);
    const int* sc = sw ? c.send_args.counts.data() : scounts;
    const int* sd = sw ? c.send_args.displacements.data() : sdispls;
    const MPI_Datatype* st = sw ? c.send_args.types.data() : stypes;
    void* d = rw ? c.recv.wire() : rbuf;
    const int* rc_ = rw ? c.recv_args.counts.data() : rcounts;
    const int* rd = rw ? c.recv_args.displacements.data() : rdispls;
    const MPI_Datatype* rt = rw ? c.recv_args.types.data() : rtypes;
    return r ? STRIDER_NEXT(MPI_Ialltoallw)(s, sc, sd, st, d, rc_, rd, rt, comm, r)
             : STRIDER_NEXT(MPI_Alltoallw)(s, sc, sd, st, d, rc_, rd, rt, comm);
  });
}

}  // namespace strider::transfer::collective
