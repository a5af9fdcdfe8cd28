// Alltoall, Alltoallv, Alltoallw: a piece per peer on each side. With MPI_IN_PLACE the send
// pieces are the receive pieces; the wires are never in place, so the MPI sees an ordinary call.
// Blocking calls on one node first try GPU to GPU (same_node.hpp), which every rank must ask.
#include <climits>
#include <optional>

#include "calls/collectives.hpp"
#include "calls/mpi_forms.hpp"
#include "collective/call.hpp"
#include "collective/execute.hpp"
#include "collective/same_node.hpp"
#include "collective/specs.hpp"
#include "transfer/next.hpp"
#include "transfer/state.hpp"

namespace strider::calls {
namespace {

// The own piece: in place it stays where it is (the MPI leaves it alone), else it is copied
// directly (intracommunicators only: an intercommunicator's pieces are the remote group's).
void own_piece(collective::Call& call, const collective::Group& g, bool in_place) {
  if (g.inter) return;
  if (in_place) {
    for (collective::Piece& p : call.recv.pieces()) p.preload = true;
    call.recv.pieces()[g.rank].preload = false;
    call.recv.pieces()[g.rank].skip = true;
    return;
  }
  collective::copy_own_piece(call, g.rank, g.rank);
}

// The all-to-alls' same-node shape: a record per peer each way (same_node.hpp).
collective::SameNodeShape same_node_shape(const collective::Group& g, bool in_place) {
  collective::SameNodeShape shape;
  shape.exchange = collective::SameNodeShape::Exchange::Alltoall;
  shape.send_records = shape.recv_records = shape.recv_pieces = g.size;
  shape.source_is_recv = in_place;
  shape.own_send = shape.own_recv = g.rank;
  shape.copy_own = !in_place;
  shape.own_send_private = true;
  return shape;
}

}  // namespace

int alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
             MPI_Datatype rtype, MPI_Comm comm, const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Alltoall, MPI_Ialltoall, MPI_Alltoall_init);
  const auto forward = [&] {
    return mpi.forward(form, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  };
  collective::Group g;
  if (const auto rc = collective::forward_unless_grouped(comm, g, forward)) return *rc;
  const bool in_place = sbuf == MPI_IN_PLACE;
  if (in_place && g.inter) return forward();  // erroneous: the MPI reports it
  std::vector<collective::PieceSpec> send_specs, recv_specs;
  auto call = std::make_unique<collective::Call>(comm);
  const bool served = collective::uniform_specs(g.size, rcount, rtype, recv_specs) &&
                      (in_place || collective::uniform_specs(g.size, scount, stype, send_specs)) &&
                      collective::describe_sides(*call, sbuf, rbuf, send_specs, recv_specs);
  if (served) own_piece(*call, g, in_place);
  const collective::SameNodeShape shape = same_node_shape(g, in_place);
  return collective::execute(
      std::move(call), served, g.inter ? nullptr : &shape, form, forward,
      collective::nothing_to_prepare, [&](collective::Call& c, const collective::Form& r) {
        const collective::Uniform s = collective::uniform_args(c.send, sbuf, scount, stype);
        const collective::Uniform d = collective::uniform_args(c.recv, rbuf, rcount, rtype);
        return mpi(r, s.buffer, s.count, s.type, d.buffer, d.count, d.type, comm);
      });
}

int alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
              void* rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype,
              MPI_Comm comm, const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Alltoallv, MPI_Ialltoallv, MPI_Alltoallv_init);
  const auto forward = [&] {
    return mpi.forward(form, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  };
  collective::Group g;
  if (const auto rc = collective::forward_unless_grouped(comm, g, forward)) return *rc;
  const bool in_place = sbuf == MPI_IN_PLACE;
  if (in_place && g.inter) return forward();  // erroneous: the MPI reports it
  std::vector<collective::PieceSpec> send_specs, recv_specs;
  auto call = std::make_unique<collective::Call>(comm);
  const bool served =
      collective::varying_specs(g.size, rcounts, rdispls, rtype, recv_specs) &&
      (in_place || collective::varying_specs(g.size, scounts, sdispls, stype, send_specs)) &&
      collective::describe_sides(*call, sbuf, rbuf, send_specs, recv_specs);
  if (served) own_piece(*call, g, in_place);
  const collective::SameNodeShape shape = same_node_shape(g, in_place);
  collective::Varying s{}, d{};
  return collective::execute(
      std::move(call), served, g.inter ? nullptr : &shape, form, forward,
      [&](collective::Call& c) -> int {
        if (const int rc =
                collective::varying_args(c, c.send, c.send_args, scounts, sdispls, stype, s)) {
          return rc;
        }
        return collective::varying_args(c, c.recv, c.recv_args, rcounts, rdispls, rtype, d);
      },
      [&](collective::Call& c, const collective::Form& r) {
        void* sb = collective::wire_or(c.send, sbuf);
        void* db = collective::wire_or(c.recv, rbuf);
        return mpi(r, sb, s.counts, s.displs, s.type, db, d.counts, d.displs, d.type, comm);
      });
}

int alltoallw(const void* sbuf, const int scounts[], const int sdispls[],
              const MPI_Datatype stypes[], void* rbuf, const int rcounts[], const int rdispls[],
              const MPI_Datatype rtypes[], MPI_Comm comm, const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Alltoallw, MPI_Ialltoallw, MPI_Alltoallw_init);
  const auto forward = [&] {
    return mpi.forward(form, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
  };
  collective::Group g;
  if (const auto rc = collective::forward_unless_grouped(comm, g, forward)) return *rc;
  const bool in_place = sbuf == MPI_IN_PLACE;
  if (in_place && g.inter) return forward();
  if (collective::negative(g.size, rcounts) || (!in_place && collective::negative(g.size, scounts)))
    return forward();
  std::vector<collective::PieceSpec> send_specs, recv_specs;
  collective::typed_specs(g.size, rcounts, rdispls, rtypes, recv_specs);
  if (!in_place) collective::typed_specs(g.size, scounts, sdispls, stypes, send_specs);
  auto call = std::make_unique<collective::Call>(comm);
  const bool served = collective::describe_sides(*call, sbuf, rbuf, send_specs, recv_specs);
  if (served) own_piece(*call, g, in_place);
  const collective::SameNodeShape shape = same_node_shape(g, in_place);
  // The wire's byte displacements as ints (the -w forms of MPI-3 take int displacements).
  const auto w_args = [&](collective::Call& c, collective::Side& side, collective::WireArgs& wire,
                          std::vector<int>& displs) -> int {
    if (const int rc = collective::wire_args(c, side, true, wire)) return rc;
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
  return collective::execute(
      std::move(call), served, g.inter ? nullptr : &shape, form, forward,
      [&](collective::Call& c) -> int {
        if (c.send.converted()) {
          if (const int rc = w_args(c, c.send, c.send_args, c.send_args.displacements)) return rc;
        }
        if (c.recv.converted()) return w_args(c, c.recv, c.recv_args, c.recv_args.displacements);
        return MPI_SUCCESS;
      },
      [&](collective::Call& c, const collective::Form& r) {
        const bool sw = c.send.converted(), rw = c.recv.converted();
        const void* s = sw ? c.send.wire() : (in_place ? MPI_IN_PLACE : sbuf);
        const int* sc = sw ? c.send_args.counts.data() : scounts;
        const int* sd = sw ? c.send_args.displacements.data() : sdispls;
        const MPI_Datatype* st = sw ? c.send_args.types.data() : stypes;
        void* d = rw ? c.recv.wire() : rbuf;
        const int* rc_ = rw ? c.recv_args.counts.data() : rcounts;
        const int* rd = rw ? c.recv_args.displacements.data() : rdispls;
        const MPI_Datatype* rt = rw ? c.recv_args.types.data() : rtypes;
        return mpi(r, s, sc, sd, st, d, rc_, rd, rt, comm);
      });
}

}  // namespace strider::calls
