// Allgather(v), Gather(v), Scatter(v), Bcast: one side is a single piece (this rank's
// contribution or share), the other a piece per peer where the standard makes it significant.
// A side the standard ignores on this rank is described empty and passed to the MPI as given.
// Blocking calls on one node first try GPU to GPU (same_node.hpp).
#include <climits>

#include "transfer/collective/call.hpp"
#include "transfer/collective/collectives.hpp"
#include "transfer/collective/roles.hpp"
#include "transfer/collective/same_node.hpp"
#include "transfer/collective/specs.hpp"
#include "transfer/next.hpp"
#include "transfer/state.hpp"

namespace strider::transfer::collective {
namespace {

// The send side of an allgather: this rank's piece, from the receive buffer in place.
bool allgather_send(Call& call, const Group& g, const void* sbuf, int scount, MPI_Datatype stype) {
  std::vector<PieceSpec> specs;
  if (sbuf == MPI_IN_PLACE) return !g.inter;  // no send side: the own piece is preloaded
  return single_spec(scount, stype, 0, specs) && call.send.describe(sbuf, specs);
}

// Describes an allgather's sides from its receive pieces; false to forward.
bool describe_allgather(Call& call, const Group& g, const void* sbuf, int scount,
                        MPI_Datatype stype, void* rbuf, const std::vector<PieceSpec>& recv_specs) {
  return call.recv.describe(rbuf, recv_specs) && allgather_send(call, g, sbuf, scount, stype) &&
         (call.send.converted() || call.recv.converted());
}

// An intracommunicator allgather's own piece: in place the MPI reads it from the wire and
// leaves it where it is; else it is copied straight across.
void allgather_own_piece(Call& call, const Group& g, bool in_place) {
  if (g.inter) return;
  if (in_place) {
    call.recv.pieces()[g.rank].preload = true;
    call.recv.pieces()[g.rank].skip = true;
  } else {
    copy_own_piece(call, 0, g.rank, false);
  }
}

// Blocking allgathers on an intracommunicator: GPU to GPU when every rank can (same_node.hpp);
// every rank must ask.
bool try_same_node(MPI_Comm comm, const Group& g, Call* call, bool in_place, MPI_Request* request,
                   int& rc) {
  if (request || g.inter) return false;
  SameNodeShape shape;
  shape.exchange = SameNodeShape::Exchange::Allgather;
  shape.send_records = 1;
  shape.recv_records = shape.recv_pieces = g.size;
  shape.source_is_recv = in_place;
  shape.source_first = in_place ? g.rank : 0;  // in place, this rank's piece is its receive slot
  shape.own_send = in_place ? -1 : 0;
  shape.own_recv = g.rank;
  shape.copy_own = !in_place;
  return same_node_collective(comm, shape, call, rc);
}

// A gather's or scatter's own piece at an intracommunicator's root: in place it stays where it
// is (its piece of the root's many-piece side is skipped); else it is copied straight across.
void rooted_own_piece(Call& call, const Group& g, Role role, bool in_place, bool gather) {
  if (role != Role::Root || g.inter) return;
  Side& many = gather ? call.recv : call.send;
  if (in_place) {
    many.pieces()[g.rank].skip = true;
  } else if (gather) {
    copy_own_piece(call, 0, g.rank);
  } else {
    copy_own_piece(call, g.rank, 0);
  }
}

// Blocking rooted calls on an intracommunicator: GPU to GPU when every rank can
// (same_node.hpp); every rank must ask. `in_place`: at the root (the send buffer of a gather,
// the receive buffer of a scatter).
bool try_same_node_rooted(MPI_Comm comm, const Group& g, SameNodeShape::Exchange exchange, int root,
                          bool in_place, Call* call, MPI_Request* request, int& rc) {
  // An invalid root (the same on every rank) is the MPI's to report, once.
  if (request || g.inter || root < 0 || root >= g.size) return false;
  using Exchange = SameNodeShape::Exchange;
  SameNodeShape shape;
  shape.exchange = exchange;
  shape.root = root;
  const bool at_root = g.rank == root;
  if (exchange == Exchange::Gather) {
    shape.send_records = 1;
    shape.recv_records = shape.recv_pieces = at_root ? g.size : 0;
    if (at_root) {
      shape.own_recv = root;
      shape.own_send_private = true;
      shape.source_is_recv = in_place;  // in place: the root's piece is its own slot
      shape.source_first = in_place ? root : 0;
      shape.own_send = in_place ? root : 0;
      shape.copy_own = !in_place;
    }
  } else if (exchange == Exchange::Scatter) {
    shape.send_records = at_root ? g.size : 0;
    shape.recv_records = 1;
    shape.recv_pieces = at_root && in_place ? 0 : 1;
    if (at_root) {
      shape.own_send = root;
      shape.own_send_private = true;
      shape.own_recv = 0;
      shape.copy_own = !in_place;
    }
  } else {  // Bcast
    shape.send_records = at_root ? 1 : 0;
    shape.recv_records = shape.recv_pieces = at_root ? 0 : 1;
  }
  return same_node_collective(comm, shape, call, rc);
}

}  // namespace

int allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
              MPI_Datatype rtype, MPI_Comm comm, MPI_Request* request) {
  const auto forward = [&] {
    counters().collectives_forwarded++;
    return request ? STRIDER_NEXT(MPI_Iallgather)(sbuf, scount, stype, rbuf, rcount, rtype, comm,
                                                  request)
                   : STRIDER_NEXT(MPI_Allgather)(sbuf, scount, stype, rbuf, rcount, rtype, comm);
  };
  Group g;
  if (strider_off() || !group_of(comm, g)) return forward();
  const bool in_place = sbuf == MPI_IN_PLACE;
  std::vector<PieceSpec> recv_specs;
  auto call = std::make_unique<Call>(comm);
  const bool served = uniform_specs(g.size, rcount, rtype, recv_specs) &&
                      describe_allgather(*call, g, sbuf, scount, stype, rbuf, recv_specs);
  if (int rc = 0; try_same_node(comm, g, served ? call.get() : nullptr, in_place, request, rc)) {
    return rc;
  }
  if (!served) return forward();
  allgather_own_piece(*call, g, in_place);
  Call& c = *call;
  return serve(std::move(call), request, [&](MPI_Request* r) {
    const Uniform s = uniform_args(c.send, sbuf, scount, stype);
    const Uniform d = uniform_args(c.recv, rbuf, rcount, rtype);
    return r ? STRIDER_NEXT(MPI_Iallgather)(s.buffer, s.count, s.type, d.buffer, d.count, d.type,
                                            comm, r)
             : STRIDER_NEXT(MPI_Allgather)(s.buffer, s.count, s.type, d.buffer, d.count, d.type,
                                           comm);
  });
}

int allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
               const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request* request) {
  const auto forward = [&] {
    counters().collectives_forwarded++;
    return request ? STRIDER_NEXT(MPI_Iallgatherv)(sbuf, scount, stype, rbuf, rcounts, displs,
                                                   rtype, comm, request)
                   : STRIDER_NEXT(MPI_Allgatherv)(sbuf, scount, stype, rbuf, rcounts, displs, rtype,
                                                  comm);
  };
  Group g;
  if (strider_off() || !group_of(comm, g)) return forward();
  const bool in_place = sbuf == MPI_IN_PLACE;
  std::vector<PieceSpec> recv_specs;
  auto call = std::make_unique<Call>(comm);
  const bool served = varying_specs(g.size, rcounts, displs, rtype, recv_specs) &&
                      describe_allgather(*call, g, sbuf, scount, stype, rbuf, recv_specs);
  if (int rc = 0; try_same_node(comm, g, served ? call.get() : nullptr, in_place, request, rc)) {
    return rc;
  }
  if (!served) return forward();
  allgather_own_piece(*call, g, in_place);
  Call& c = *call;
  Varying d{};
  if (const int rc = varying_args(c, c.recv, c.recv_args, rcounts, displs, rtype, d)) return rc;
  return serve(std::move(call), request, [&](MPI_Request* r) {
    const Uniform s = uniform_args(c.send, sbuf, scount, stype);
    void* dbuf = wire_or(c.recv, rbuf);
    return r ? STRIDER_NEXT(MPI_Iallgatherv)(s.buffer, s.count, s.type, dbuf, d.counts, d.displs,
                                             d.type, comm, r)
             : STRIDER_NEXT(MPI_Allgatherv)(s.buffer, s.count, s.type, dbuf, d.counts, d.displs,
                                            d.type, comm);
  });
}

int gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
           MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* request) {
  const auto forward = [&] {
    counters().collectives_forwarded++;
    return request ? STRIDER_NEXT(MPI_Igather)(sbuf, scount, stype, rbuf, rcount, rtype, root, comm,
                                               request)
                   : STRIDER_NEXT(MPI_Gather)(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  };
  Group g;
  if (strider_off() || !group_of(comm, g)) return forward();
  const Role role = role_of(g, root);
  if (role == Role::Idle) return forward();
  const bool in_place = sbuf == MPI_IN_PLACE;
  auto call = std::make_unique<Call>(comm);
  std::vector<PieceSpec> specs;
  // Sends: every rank but an intercommunicator's root, unless in place at the root.
  const bool sends = !(g.inter && role == Role::Root) && !(role == Role::Root && in_place);
  const bool served =
      (!sends || (single_spec(scount, stype, 0, specs) && call->send.describe(sbuf, specs))) &&
      (role != Role::Root ||
       (uniform_specs(g.size, rcount, rtype, specs) && call->recv.describe(rbuf, specs))) &&
      (call->send.converted() || call->recv.converted());
  if (int rc = 0; try_same_node_rooted(comm, g, SameNodeShape::Exchange::Gather, root, in_place,
                                       served ? call.get() : nullptr, request, rc)) {
    return rc;
  }
  if (!served) return forward();
  rooted_own_piece(*call, g, role, in_place, true);
  Call& c = *call;
  return serve(std::move(call), request, [&](MPI_Request* r) {
    const Uniform s = uniform_args(c.send, sbuf, scount, stype);
    const Uniform d = uniform_args(c.recv, rbuf, rcount, rtype);
    return r ? STRIDER_NEXT(MPI_Igather)(s.buffer, s.count, s.type, d.buffer, d.count, d.type, root,
                                         comm, r)
             : STRIDER_NEXT(MPI_Gather)(s.buffer, s.count, s.type, d.buffer, d.count, d.type, root,
                                        comm);
  });
}

int gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
            const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* request) {
  const auto forward = [&] {
    counters().collectives_forwarded++;
    return request ? STRIDER_NEXT(MPI_Igatherv)(sbuf, scount, stype, rbuf, rcounts, displs, rtype,
                                                root, comm, request)
                   : STRIDER_NEXT(MPI_Gatherv)(sbuf, scount, stype, rbuf, rcounts, displs, rtype,
                                               root, comm);
  };
  Group g;
  if (strider_off() || !group_of(comm, g)) return forward();
  const Role role = role_of(g, root);
  if (role == Role::Idle) return forward();
  const bool in_place = sbuf == MPI_IN_PLACE;
  auto call = std::make_unique<Call>(comm);
  std::vector<PieceSpec> specs;
  const bool sends = !(g.inter && role == Role::Root) && !(role == Role::Root && in_place);
  const bool served =
      (!sends || (single_spec(scount, stype, 0, specs) && call->send.describe(sbuf, specs))) &&
      (role != Role::Root || (varying_specs(g.size, rcounts, displs, rtype, specs) &&
                              call->recv.describe(rbuf, specs))) &&
      (call->send.converted() || call->recv.converted());
  if (int rc = 0; try_same_node_rooted(comm, g, SameNodeShape::Exchange::Gather, root, in_place,
                                       served ? call.get() : nullptr, request, rc)) {
    return rc;
  }
  if (!served) return forward();
  rooted_own_piece(*call, g, role, in_place, true);
  Call& c = *call;
  Varying d{rcounts, displs, rtype};
  if (role == Role::Root) {
    if (const int rc = varying_args(c, c.recv, c.recv_args, rcounts, displs, rtype, d)) return rc;
  }
  return serve(std::move(call), request, [&](MPI_Request* r) {
    const Uniform s = uniform_args(c.send, sbuf, scount, stype);
    void* dbuf = wire_or(c.recv, rbuf);
    return r ? STRIDER_NEXT(MPI_Igatherv)(s.buffer, s.count, s.type, dbuf, d.counts, d.displs,
                                          d.type, root, comm, r)
             : STRIDER_NEXT(MPI_Gatherv)(s.buffer, s.count, s.type, dbuf, d.counts, d.displs,
                                         d.type, root, comm);
  });
}

int scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
            MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* request) {
  const auto forward = [&] {
    counters().collectives_forwarded++;
    return request
               ? STRIDER_NEXT(MPI_Iscatter)(sbuf, scount, stype, rbuf, rcount, rtype, root, comm,
                                            request)
               : STRIDER_NEXT(MPI_Scatter)(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  };
  Group g;
  if (strider_off() || !group_of(comm, g)) return forward();
  const Role role = role_of(g, root);
  if (role == Role::Idle) return forward();
  const bool in_place = rbuf == MPI_IN_PLACE;
  auto call = std::make_unique<Call>(comm);
  std::vector<PieceSpec> specs;
  const bool receives = !(g.inter && role == Role::Root) && !(role == Role::Root && in_place);
  const bool served =
      (!receives || (single_spec(rcount, rtype, 0, specs) && call->recv.describe(rbuf, specs))) &&
      (role != Role::Root ||
       (uniform_specs(g.size, scount, stype, specs) && call->send.describe(sbuf, specs))) &&
      (call->send.converted() || call->recv.converted());
  if (int rc = 0; try_same_node_rooted(comm, g, SameNodeShape::Exchange::Scatter, root, in_place,
                                       served ? call.get() : nullptr, request, rc)) {
    return rc;
  }
  if (!served) return forward();
  rooted_own_piece(*call, g, role, in_place, false);
  Call& c = *call;
  return serve(std::move(call), request, [&](MPI_Request* r) {
    const Uniform s = uniform_args(c.send, sbuf, scount, stype);
    const Uniform d = uniform_args(c.recv, rbuf, rcount, rtype);
    return r ? STRIDER_NEXT(MPI_Iscatter)(s.buffer, s.count, s.type, d.buffer, d.count, d.type,
                                          root, comm, r)
             : STRIDER_NEXT(MPI_Scatter)(s.buffer, s.count, s.type, d.buffer, d.count, d.type, root,
                                         comm);
  });
}

int scatterv(const void* sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
             void* rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
             MPI_Request* request) {
  const auto forward = [&] {
    counters().collectives_forwarded++;
    return request ? STRIDER_NEXT(MPI_Iscatterv)(sbuf, scounts, displs, stype, rbuf, rcount, rtype,
                                                 root, comm, request)
                   : STRIDER_NEXT(MPI_Scatterv)(sbuf, scounts, displs, stype, rbuf, rcount, rtype,
                                                root, comm);
  };
  Group g;
  if (strider_off() || !group_of(comm, g)) return forward();
  const Role role = role_of(g, root);
  if (role == Role::Idle) return forward();
  const bool in_place = rbuf == MPI_IN_PLACE;
  auto call = std::make_unique<Call>(comm);
  std::vector<PieceSpec> specs;
  const bool receives = !(g.inter && role == Role::Root) && !(role == Role::Root && in_place);
  const bool served =
      (!receives || (single_spec(rcount, rtype, 0, specs) && call->recv.describe(rbuf, specs))) &&
      (role != Role::Root || (varying_specs(g.size, scounts, displs, stype, specs) &&
                              call->send.describe(sbuf, specs))) &&
      (call->send.converted() || call->recv.converted());
  if (int rc = 0; try_same_node_rooted(comm, g, SameNodeShape::Exchange::Scatter, root, in_place,
                                       served ? call.get() : nullptr, request, rc)) {
    return rc;
  }
  if (!served) return forward();
  rooted_own_piece(*call, g, role, in_place, false);
  Call& c = *call;
  Varying s{scounts, displs, stype};
  if (role == Role::Root) {
    if (const int rc = varying_args(c, c.send, c.send_args, scounts, displs, stype, s)) return rc;
  }
  return serve(std::move(call), request, [&](MPI_Request* r) {
    void* sb = wire_or(c.send, sbuf);
    const Uniform d = uniform_args(c.recv, rbuf, rcount, rtype);
    return r ? STRIDER_NEXT(MPI_Iscatterv)(sb, s.counts, s.displs, s.type, d.buffer, d.count,
                                           d.type, root, comm, r)
             : STRIDER_NEXT(MPI_Scatterv)(sb, s.counts, s.displs, s.type, d.buffer, d.count, d.type,
                                          root, comm);
  });
}

int bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request) {
  const auto forward = [&] {
    counters().collectives_forwarded++;
    return request ? STRIDER_NEXT(MPI_Ibcast)(buf, count, type, root, comm, request)
                   : STRIDER_NEXT(MPI_Bcast)(buf, count, type, root, comm);
  };
  Group g;
  if (strider_off() || !group_of(comm, g)) return forward();
  const Role role = role_of(g, root);
  if (role == Role::Idle) return forward();
  auto call = std::make_unique<Call>(comm);
  std::vector<PieceSpec> specs;
  Side& side = role == Role::Root ? call->send : call->recv;
  const bool served =
      single_spec(count, type, 0, specs) && side.describe(buf, specs) && side.converted();
  if (int rc = 0; try_same_node_rooted(comm, g, SameNodeShape::Exchange::Bcast, root, false,
                                       served ? call.get() : nullptr, request, rc)) {
    return rc;
  }
  if (!served) return forward();
  Call& c = *call;
  return serve(std::move(call), request, [&](MPI_Request* r) {
    const Uniform u = uniform_args(role == Role::Root ? c.send : c.recv, buf, count, type);
    return r ? STRIDER_NEXT(MPI_Ibcast)(u.buffer, u.count, u.type, root, comm, r)
             : STRIDER_NEXT(MPI_Bcast)(u.buffer, u.count, u.type, root, comm);
  });
}

}  // namespace strider::transfer::collective
