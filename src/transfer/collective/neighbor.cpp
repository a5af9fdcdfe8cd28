// The neighbourhood collectives on Cartesian, graph and distributed-graph communicators: a
// piece per out-neighbour on the send side (one piece for the allgathers), a piece per
// in-neighbour on the receive side, in the topology's neighbour order. A neighbour may appear
// more than once, or be this rank: each occurrence is its own piece, moved by the MPI (or, GPU
// to GPU on one node, matched by the MPI: same_node.hpp).
#include <climits>

#include "transfer/collective/call.hpp"
#include "transfer/collective/collectives.hpp"
#include "transfer/collective/same_node.hpp"
#include "transfer/collective/specs.hpp"
#include "transfer/next.hpp"
#include "transfer/state.hpp"

namespace strider::transfer::collective {
namespace {

// False when the communicator has no topology (the MPI reports it).
bool neighbors_of(MPI_Comm comm, int& in, int& out) {
  if (comm == MPI_COMM_NULL) return false;
  int topology = MPI_UNDEFINED;
  if (PMPI_Topo_test(comm, &topology) != MPI_SUCCESS) return false;
  if (topology == MPI_CART) {
    int dims = 0;
    if (PMPI_Cartdim_get(comm, &dims) != MPI_SUCCESS) return false;
    in = out = 2 * dims;
    return true;
  }
  if (topology == MPI_GRAPH) {
    int rank = 0;
    if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return false;
    if (PMPI_Graph_neighbors_count(comm, rank, &in) != MPI_SUCCESS) return false;
    out = in;
    return true;
  }
  if (topology == MPI_DIST_GRAPH) {
    int weighted = 0;
    return PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted) == MPI_SUCCESS;
  }
  return false;
}

// Blocking calls: GPU to GPU when every rank can (same_node.hpp); every rank must ask.
bool try_same_node(MPI_Comm comm, SameNodeShape::Exchange exchange, int send_pieces,
                   int recv_pieces, Call* call, MPI_Request* request, int& rc) {
  if (request) return false;
  SameNodeShape shape;
  shape.exchange = exchange;
  shape.send_records = send_pieces;
  shape.recv_records = shape.recv_pieces = recv_pieces;
  return same_node_collective(comm, shape, call, rc);
}

}  // namespace

int neighbor_allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                       MPI_Datatype rtype, MPI_Comm comm, MPI_Request* request) {
  const auto forward = [&] {
    counters().collectives_forwarded++;
    return request ? STRIDER_NEXT(MPI_Ineighbor_allgather)(sbuf, scount, stype, rbuf, rcount, rtype,
                                                           comm, request)
                   : STRIDER_NEXT(MPI_Neighbor_allgather)(sbuf, scount, stype, rbuf, rcount, rtype,
                                                          comm);
  };
  int in = 0, out = 0;
  if (strider_off() || !neighbors_of(comm, in, out)) return forward();
  auto call = std::make_unique<Call>(comm);
  std::vector<PieceSpec> specs;
  const bool served = single_spec(scount, stype, 0, specs) && call->send.describe(sbuf, specs) &&
                      uniform_specs(in, rcount, rtype, specs) && call->recv.describe(rbuf, specs) &&
                      (call->send.converted() || call->recv.converted());
  if (int rc = 0; try_same_node(comm, SameNodeShape::Exchange::NeighborAllgather, 1, in,
                                served ? call.get() : nullptr, request, rc)) {
    return rc;
  }
  if (!served) return forward();
  Call& c = *call;
  return serve(std::move(call), request, [&](MPI_Request* r) {
    const Uniform s = uniform_args(c.send, sbuf, scount, stype);
    const Uniform d = uniform_args(c.recv, rbuf, rcount, rtype);
    return r ? STRIDER_NEXT(MPI_Ineighbor_allgather)(s.buffer, s.count, s.type, d.buffer, d.count,
                                                     d.type, comm, r)
             : STRIDER_NEXT(MPI_Neighbor_allgather)(s.buffer, s.count, s.type, d.buffer, d.count,
                                                    d.type, comm);
  });
}

int neighbor_allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                        const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
                        MPI_Request* request) {
  const auto forward = [&] {
    counters().collectives_forwarded++;
    return request ? STRIDER_NEXT(MPI_Ineighbor_allgatherv)(sbuf, scount, stype, rbuf, rcounts,
                                                            displs, rtype, comm, request)
                   : STRIDER_NEXT(MPI_Neighbor_allgatherv)(sbuf, scount, stype, rbuf, rcounts,
                                                           displs, rtype, comm);
  };
  int in = 0, out = 0;
  if (strider_off() || !neighbors_of(comm, in, out)) return forward();
  auto call = std::make_unique<Call>(comm);
  std::vector<PieceSpec> specs;
  const bool served = single_spec(scount, stype, 0, specs) && call->send.describe(sbuf, specs) &&
                      varying_specs(in, rcounts, displs, rtype, specs) &&
                      call->recv.describe(rbuf, specs) &&
                      (call->send.converted() || call->recv.converted());
  if (int rc = 0; try_same_node(comm, SameNodeShape::Exchange::NeighborAllgather, 1, in,
                                served ? call.get() : nullptr, request, rc)) {
    return rc;
  }
  if (!served) return forward();
  Call& c = *call;
  Varying d{};
  if (const int rc = varying_args(c, c.recv, c.recv_args, rcounts, displs, rtype, d)) return rc;
  return serve(std::move(call), request, [&](MPI_Request* r) {
    const Uniform s = uniform_args(c.send, sbuf, scount, stype);
    void* dbuf = wire_or(c.recv, rbuf);
    return r ? STRIDER_NEXT(MPI_Ineighbor_allgatherv)(s.buffer, s.count, s.type, dbuf, d.counts,
                                                      d.displs, d.type, comm, r)
             : STRIDER_NEXT(MPI_Neighbor_allgatherv)(s.buffer, s.count, s.type, dbuf, d.counts,
                                                     d.displs, d.type, comm);
  });
}

int neighbor_alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                      MPI_Datatype rtype, MPI_Comm comm, MPI_Request* request) {
  const auto forward = [&] {
    counters().collectives_forwarded++;
    return request ? STRIDER_NEXT(MPI_Ineighbor_alltoall)(sbuf, scount, stype, rbuf, rcount, rtype,
                                                          comm, request)
                   : STRIDER_NEXT(MPI_Neighbor_alltoall)(sbuf, scount, stype, rbuf, rcount, rtype,
                                                         comm);
  };
  int in = 0, out = 0;
  if (strider_off() || !neighbors_of(comm, in, out)) return forward();
  auto call = std::make_unique<Call>(comm);
  std::vector<PieceSpec> specs;
  const bool served = uniform_specs(out, scount, stype, specs) &&
                      call->send.describe(sbuf, specs) && uniform_specs(in, rcount, rtype, specs) &&
                      call->recv.describe(rbuf, specs) &&
                      (call->send.converted() || call->recv.converted());
  if (int rc = 0; try_same_node(comm, SameNodeShape::Exchange::NeighborAlltoall, out, in,
                                served ? call.get() : nullptr, request, rc)) {
    return rc;
  }
  if (!served) return forward();
  Call& c = *call;
  return serve(std::move(call), request, [&](MPI_Request* r) {
    const Uniform s = uniform_args(c.send, sbuf, scount, stype);
    const Uniform d = uniform_args(c.recv, rbuf, rcount, rtype);
    return r ? STRIDER_NEXT(MPI_Ineighbor_alltoall)(s.buffer, s.count, s.type, d.buffer, d.count,
                                                    d.type, comm, r)
             : STRIDER_NEXT(MPI_Neighbor_alltoall)(s.buffer, s.count, s.type, d.buffer, d.count,
                                                   d.type, comm);
  });
}

int neighbor_alltoallv(const void* sbuf, const int scounts[], const int sdispls[],
                       MPI_Datatype stype, void* rbuf, const int rcounts[], const int rdispls[],
                       MPI_Datatype rtype, MPI_Comm comm, MPI_Request* request) {
  const auto forward = [&] {
    counters().collectives_forwarded++;
    return request ? STRIDER_NEXT(MPI_Ineighbor_alltoallv)(sbuf, scounts, sdispls, stype, rbuf,
                                                           rcounts, rdispls, rtype, comm, request)
                   : STRIDER_NEXT(MPI_Neighbor_alltoallv)(sbuf, scounts, sdispls, stype, rbuf,
                                                          rcounts, rdispls, rtype, comm);
  };
  int in = 0, out = 0;
  if (strider_off() || !neighbors_of(comm, in, out)) return forward();
  auto call = std::make_unique<Call>(comm);
  std::vector<PieceSpec> specs;
  const bool served =
      varying_specs(out, scounts, sdispls, stype, specs) && call->send.describe(sbuf, specs) &&
      varying_specs(in, rcounts, rdispls, rtype, specs) && call->recv.describe(rbuf, specs) &&
      (call->send.converted() || call->recv.converted());
  if (int rc = 0; try_same_node(comm, SameNodeShape::Exchange::NeighborAlltoall, out, in,
                                served ? call.get() : nullptr, request, rc)) {
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
    return r ? STRIDER_NEXT(MPI_Ineighbor_alltoallv)(sb, s.counts, s.displs, s.type, db, d.counts,
                                                     d.displs, d.type, comm, r)
             : STRIDER_NEXT(MPI_Neighbor_alltoallv)(sb, s.counts, s.displs, s.type, db, d.counts,
                                                    d.displs, d.type, comm);
  });
}

int neighbor_alltoallw(const void* sbuf, const int scounts[], const MPI_Aint sdispls[],
                       const MPI_Datatype stypes[], void* rbuf, const int rcounts[],
                       const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                       MPI_Request* request) {
  const auto forward = [&] {
    counters().collectives_forwarded++;
    return request ? STRIDER_NEXT(MPI_Ineighbor_alltoallw)(sbuf, scounts, sdispls, stypes, rbuf,
                                                           rcounts, rdispls, rtypes, comm, request)
                   : STRIDER_NEXT(MPI_Neighbor_alltoallw)(sbuf, scounts, sdispls, stypes, rbuf,
                                                          rcounts, rdispls, rtypes, comm);
  };
  int in = 0, out = 0;
  if (strider_off() || !neighbors_of(comm, in, out)) return forward();
  if (negative(out, scounts) || negative(in, rcounts)) return forward();
  auto call = std::make_unique<Call>(comm);
  std::vector<PieceSpec> send_specs, recv_specs;
  typed_specs(out, scounts, sdispls, stypes, send_specs);
  typed_specs(in, rcounts, rdispls, rtypes, recv_specs);
  const bool served = call->send.describe(sbuf, send_specs) &&
                      call->recv.describe(rbuf, recv_specs) &&
                      (call->send.converted() || call->recv.converted());
  if (int rc = 0; try_same_node(comm, SameNodeShape::Exchange::NeighborAlltoall, out, in,
                                served ? call.get() : nullptr, request, rc)) {
    return rc;
  }
  if (!served) return forward();
  Call& c = *call;
  if (c.send.converted()) {
    if (const int rc = wire_args(c, c.send, true, c.send_args)) return rc;
  }
  if (c.recv.converted()) {
    if (const int rc = wire_args(c, c.recv, true, c.recv_args)) return rc;
  }
  return serve(std::move(call), request, [&](MPI_Request* r) {
    const bool sw = c.send.converted(), rw = c.recv.converted();
    const void* sb = sw ? c.send.wire() : sbuf;
    const int* sc = sw ? c.send_args.counts.data() : scounts;
    const MPI_Aint* sd = sw ? c.send_args.byte_displacements.data() : sdispls;
    const MPI_Datatype* st = sw ? c.send_args.types.data() : stypes;
    void* db = rw ? c.recv.wire() : rbuf;
    const int* rcs = rw ? c.recv_args.counts.data() : rcounts;
    const MPI_Aint* rd = rw ? c.recv_args.byte_displacements.data() : rdispls;
    const MPI_Datatype* rt = rw ? c.recv_args.types.data() : rtypes;
    return r ? STRIDER_NEXT(MPI_Ineighbor_alltoallw)(sb, sc, sd, st, db, rcs, rd, rt, comm, r)
             : STRIDER_NEXT(MPI_Neighbor_alltoallw)(sb, sc, sd, st, db, rcs, rd, rt, comm);
  });
}

}  // namespace strider::transfer::collective
