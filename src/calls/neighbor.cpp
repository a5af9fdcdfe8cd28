// The neighbourhood collectives on Cartesian, graph and distributed-graph communicators: a
// piece per out-neighbour on the send side (one piece for the allgathers), a piece per
// in-neighbour on the receive side, in the topology's neighbour order. A neighbour may appear
// more than once, or be this rank: each occurrence is its own piece, moved by the MPI (or, GPU
// to GPU on one node, matched by the MPI: same_node.hpp).
#include <algorithm>
#include <climits>
#include <optional>
#include <vector>

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

// The topology of `comm` (MPI_Topo_test) and its in- and out-degrees; false when it has none,
// with `rejected` the MPI's error where it rejected the communicator (its handler has run).
bool topology_degrees(MPI_Comm comm, int& topology, int& in, int& out, int& rejected) {
  rejected = MPI_SUCCESS;
  if (comm == MPI_COMM_NULL) return false;
  rejected = PMPI_Topo_test(comm, &topology);
  if (rejected != MPI_SUCCESS) return false;
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

// What a neighbourhood collective returns where it goes to the MPI as it is
// (collective::forward_unless_rejected; Strider off, no topology: forward()'s); std::nullopt where
// Strider may serve it (`topology`, `in`, `out`).
template <class Forward>
std::optional<int> forward_unless_topology(MPI_Comm comm, int& topology, int& in, int& out,
                                           Forward forward) {
  int rejected = MPI_SUCCESS;
  if (!collective::strider_off() && topology_degrees(comm, topology, in, out, rejected)) {
    return std::nullopt;
  }
  return collective::forward_unless_rejected(rejected, forward);
}

// The in-neighbours in the receive side's order, where the topology may name MPI_PROC_NULL (a
// Cartesian dimension that is not periodic; a distributed graph's sources); empty otherwise.
// `topology`, `in` and `out` as topology_degrees gave them.
std::vector<int> in_neighbours(MPI_Comm comm, int topology, int in, int out) {
  std::vector<int> sources;
  if (topology == MPI_CART) {
    sources.resize(static_cast<std::size_t>(in));
    for (int d = 0; 2 * d + 1 < in; ++d) {
      if (PMPI_Cart_shift(comm, d, 1, &sources[2 * d], &sources[2 * d + 1]) != MPI_SUCCESS) {
        return {};
      }
    }
  } else if (topology == MPI_DIST_GRAPH && in > 0) {
    sources.resize(static_cast<std::size_t>(in));
    std::vector<int> weights(static_cast<std::size_t>(in)), dests(std::max(out, 1)),
        dest_weights(std::max(out, 1));
    if (PMPI_Dist_graph_neighbors(comm, in, sources.data(), weights.data(), out, dests.data(),
                                  dest_weights.data()) != MPI_SUCCESS) {
      return {};
    }
  }
  return sources;
}

// The MPI writes nothing into the receive piece of an MPI_PROC_NULL in-neighbour, so the
// application's bytes there must stay as they are: its piece of the wire is not unpacked.
void keep_absent_pieces(collective::Call& call, MPI_Comm comm, int topology, int in, int out) {
  if (!call.recv.converted()) return;
  const std::vector<int> sources = in_neighbours(comm, topology, in, out);
  std::vector<collective::Piece>& pieces = call.recv.pieces();
  for (std::size_t j = 0; j < sources.size() && j < pieces.size(); ++j) {
    if (sources[j] == MPI_PROC_NULL) pieces[j].skip = true;
  }
}

// The neighbourhood collectives' same-node shapes (same_node.hpp).
collective::SameNodeShape same_node_shape(collective::SameNodeShape::Exchange exchange,
                                          int send_pieces, int recv_pieces) {
  collective::SameNodeShape shape;
  shape.exchange = exchange;
  shape.send_records = send_pieces;
  shape.recv_records = shape.recv_pieces = recv_pieces;
  return shape;
}

}  // namespace

bool neighbor_degrees(MPI_Comm comm, int& in, int& out, int& rejected) {
  int topology = MPI_UNDEFINED;
  return topology_degrees(comm, topology, in, out, rejected);
}

int neighbor_allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                       MPI_Datatype rtype, MPI_Comm comm, const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Neighbor_allgather, MPI_Ineighbor_allgather,
                                     MPI_Neighbor_allgather_init);
  const auto forward = [&] {
    return mpi.forward(form, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  };
  int topology = MPI_UNDEFINED, in = 0, out = 0;
  if (const auto rc = forward_unless_topology(comm, topology, in, out, forward)) return *rc;
  auto call = std::make_unique<collective::Call>(comm);
  std::vector<collective::PieceSpec> send_specs, recv_specs;
  const bool served = sbuf != MPI_IN_PLACE &&
                      collective::single_spec(scount, stype, 0, send_specs) &&
                      collective::uniform_specs(in, rcount, rtype, recv_specs) &&
                      collective::describe_sides(*call, sbuf, rbuf, send_specs, recv_specs);
  if (served) keep_absent_pieces(*call, comm, topology, in, out);
  const collective::SameNodeShape shape =
      same_node_shape(collective::SameNodeShape::Exchange::NeighborAllgather, 1, in);
  return collective::execute(
      std::move(call), served, &shape, form, forward, collective::nothing_to_prepare,
      [&](collective::Call& c, const collective::Form& r) {
        const collective::Uniform s = collective::uniform_args(c.send, sbuf, scount, stype);
        const collective::Uniform d = collective::uniform_args(c.recv, rbuf, rcount, rtype);
        return mpi(r, s.buffer, s.count, s.type, d.buffer, d.count, d.type, comm);
      });
}

int neighbor_allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf,
                        const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
                        const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Neighbor_allgatherv, MPI_Ineighbor_allgatherv,
                                     MPI_Neighbor_allgatherv_init);
  const auto forward = [&] {
    return mpi.forward(form, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  };
  int topology = MPI_UNDEFINED, in = 0, out = 0;
  if (const auto rc = forward_unless_topology(comm, topology, in, out, forward)) return *rc;
  auto call = std::make_unique<collective::Call>(comm);
  std::vector<collective::PieceSpec> send_specs, recv_specs;
  const bool served = sbuf != MPI_IN_PLACE &&
                      collective::single_spec(scount, stype, 0, send_specs) &&
                      collective::varying_specs(in, rcounts, displs, rtype, recv_specs) &&
                      collective::describe_sides(*call, sbuf, rbuf, send_specs, recv_specs);
  if (served) keep_absent_pieces(*call, comm, topology, in, out);
  const collective::SameNodeShape shape =
      same_node_shape(collective::SameNodeShape::Exchange::NeighborAllgather, 1, in);
  collective::Varying d{};
  return collective::execute(
      std::move(call), served, &shape, form, forward,
      [&](collective::Call& c) -> int {
        if (const int rc =
                collective::varying_args(c, c.recv, c.recv_args, rcounts, displs, rtype, d))
          return rc;
        return MPI_SUCCESS;
      },
      [&](collective::Call& c, const collective::Form& r) {
        const collective::Uniform s = collective::uniform_args(c.send, sbuf, scount, stype);
        void* dbuf = collective::wire_or(c.recv, rbuf);
        return mpi(r, s.buffer, s.count, s.type, dbuf, d.counts, d.displs, d.type, comm);
      });
}

int neighbor_alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
                      MPI_Datatype rtype, MPI_Comm comm, const collective::Form& form) {
  const auto mpi =
      STRIDER_MPI_FORMS(MPI_Neighbor_alltoall, MPI_Ineighbor_alltoall, MPI_Neighbor_alltoall_init);
  const auto forward = [&] {
    return mpi.forward(form, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  };
  int topology = MPI_UNDEFINED, in = 0, out = 0;
  if (const auto rc = forward_unless_topology(comm, topology, in, out, forward)) return *rc;
  auto call = std::make_unique<collective::Call>(comm);
  std::vector<collective::PieceSpec> send_specs, recv_specs;
  const bool served = sbuf != MPI_IN_PLACE &&
                      collective::uniform_specs(out, scount, stype, send_specs) &&
                      collective::uniform_specs(in, rcount, rtype, recv_specs) &&
                      collective::describe_sides(*call, sbuf, rbuf, send_specs, recv_specs);
  if (served) keep_absent_pieces(*call, comm, topology, in, out);
  const collective::SameNodeShape shape =
      same_node_shape(collective::SameNodeShape::Exchange::NeighborAlltoall, out, in);
  return collective::execute(
      std::move(call), served, &shape, form, forward, collective::nothing_to_prepare,
      [&](collective::Call& c, const collective::Form& r) {
        const collective::Uniform s = collective::uniform_args(c.send, sbuf, scount, stype);
        const collective::Uniform d = collective::uniform_args(c.recv, rbuf, rcount, rtype);
        return mpi(r, s.buffer, s.count, s.type, d.buffer, d.count, d.type, comm);
      });
}

int neighbor_alltoallv(const void* sbuf, const int scounts[], const int sdispls[],
                       MPI_Datatype stype, void* rbuf, const int rcounts[], const int rdispls[],
                       MPI_Datatype rtype, MPI_Comm comm, const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Neighbor_alltoallv, MPI_Ineighbor_alltoallv,
                                     MPI_Neighbor_alltoallv_init);
  const auto forward = [&] {
    return mpi.forward(form, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  };
  int topology = MPI_UNDEFINED, in = 0, out = 0;
  if (const auto rc = forward_unless_topology(comm, topology, in, out, forward)) return *rc;
  auto call = std::make_unique<collective::Call>(comm);
  std::vector<collective::PieceSpec> send_specs, recv_specs;
  const bool served = sbuf != MPI_IN_PLACE &&
                      collective::varying_specs(out, scounts, sdispls, stype, send_specs) &&
                      collective::varying_specs(in, rcounts, rdispls, rtype, recv_specs) &&
                      collective::describe_sides(*call, sbuf, rbuf, send_specs, recv_specs);
  if (served) keep_absent_pieces(*call, comm, topology, in, out);
  const collective::SameNodeShape shape =
      same_node_shape(collective::SameNodeShape::Exchange::NeighborAlltoall, out, in);
  collective::Varying s{}, d{};
  return collective::execute(
      std::move(call), served, &shape, form, forward,
      [&](collective::Call& c) -> int {
        if (const int rc =
                collective::varying_args(c, c.send, c.send_args, scounts, sdispls, stype, s))
          return rc;
        if (const int rc =
                collective::varying_args(c, c.recv, c.recv_args, rcounts, rdispls, rtype, d))
          return rc;
        return MPI_SUCCESS;
      },
      [&](collective::Call& c, const collective::Form& r) {
        void* sb = collective::wire_or(c.send, sbuf);
        void* db = collective::wire_or(c.recv, rbuf);
        return mpi(r, sb, s.counts, s.displs, s.type, db, d.counts, d.displs, d.type, comm);
      });
}

int neighbor_alltoallw(const void* sbuf, const int scounts[], const MPI_Aint sdispls[],
                       const MPI_Datatype stypes[], void* rbuf, const int rcounts[],
                       const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                       const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Neighbor_alltoallw, MPI_Ineighbor_alltoallw,
                                     MPI_Neighbor_alltoallw_init);
  const auto forward = [&] {
    return mpi.forward(form, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
  };
  int topology = MPI_UNDEFINED, in = 0, out = 0;
  if (const auto rc = forward_unless_topology(comm, topology, in, out, forward)) return *rc;
  if (collective::negative(out, scounts) || collective::negative(in, rcounts)) return forward();
  auto call = std::make_unique<collective::Call>(comm);
  std::vector<collective::PieceSpec> send_specs, recv_specs;
  collective::typed_specs(out, scounts, sdispls, stypes, send_specs);
  collective::typed_specs(in, rcounts, rdispls, rtypes, recv_specs);
  const bool served =
      sbuf != MPI_IN_PLACE && collective::describe_sides(*call, sbuf, rbuf, send_specs, recv_specs);
  if (served) keep_absent_pieces(*call, comm, topology, in, out);
  const collective::SameNodeShape shape =
      same_node_shape(collective::SameNodeShape::Exchange::NeighborAlltoall, out, in);
  return collective::execute(
      std::move(call), served, &shape, form, forward,
      [&](collective::Call& c) -> int {
        if (c.send.converted()) {
          if (const int rc = collective::wire_args(c, c.send, true, c.send_args)) return rc;
        }
        if (c.recv.converted()) {
          if (const int rc = collective::wire_args(c, c.recv, true, c.recv_args)) return rc;
        }
        return MPI_SUCCESS;
      },
      [&](collective::Call& c, const collective::Form& r) {
        const bool sw = c.send.converted(), rw = c.recv.converted();
        const void* sb = sw ? c.send.wire() : sbuf;
        const int* sc = sw ? c.send_args.counts.data() : scounts;
        const MPI_Aint* sd = sw ? c.send_args.byte_displacements.data() : sdispls;
        const MPI_Datatype* st = sw ? c.send_args.types.data() : stypes;
        void* db = rw ? c.recv.wire() : rbuf;
        const int* rcs = rw ? c.recv_args.counts.data() : rcounts;
        const MPI_Aint* rd = rw ? c.recv_args.byte_displacements.data() : rdispls;
        const MPI_Datatype* rt = rw ? c.recv_args.types.data() : rtypes;
        return mpi(r, sb, sc, sd, st, db, rcs, rd, rt, comm);
      });
}

}  // namespace strider::calls
