// Allgather(v), Gather(v), Scatter(v), Bcast: one side is a single piece (this rank's
// contribution or share), the other a piece per peer where the standard makes it significant.
// A side the standard ignores on this rank is described empty and passed to the MPI as given.
// Blocking calls on one node first try GPU to GPU (same_node.hpp).
#include <climits>
#include <optional>

#include "calls/collectives.hpp"
#include "calls/mpi_forms.hpp"
#include "collective/call.hpp"
#include "collective/execute.hpp"
#include "collective/roles.hpp"
#include "collective/same_node.hpp"
#include "collective/specs.hpp"
#include "transfer/next.hpp"
#include "transfer/state.hpp"

namespace strider::calls {
namespace {

// The send side of an allgather: this rank's piece, from the receive buffer in place.
bool allgather_send(collective::Call& call, const collective::Group& g, const void* sbuf,
                    int scount, MPI_Datatype stype) {
  std::vector<collective::PieceSpec> specs;
  if (sbuf == MPI_IN_PLACE) return !g.inter;  // no send side: the own piece is preloaded
  return collective::single_spec(scount, stype, 0, specs) && call.send.describe(sbuf, specs);
}

// Describes an allgather's sides from its receive pieces; false to forward.
bool describe_allgather(collective::Call& call, const collective::Group& g, const void* sbuf,
                        int scount, MPI_Datatype stype, void* rbuf,
                        const std::vector<collective::PieceSpec>& recv_specs) {
  return call.recv.describe(rbuf, recv_specs) && allgather_send(call, g, sbuf, scount, stype) &&
         (call.send.converted() || call.recv.converted());
}

// An intracommunicator allgather's own piece: in place the MPI reads it from the wire and
// leaves it where it is; else it is copied straight across.
void allgather_own_piece(collective::Call& call, const collective::Group& g, bool in_place) {
  if (g.inter) return;
  if (in_place) {
    call.recv.pieces()[g.rank].preload = true;
    call.recv.pieces()[g.rank].skip = true;
  } else {
    collective::copy_own_piece(call, 0, g.rank, false);
  }
}

// The allgathers' same-node shape: one record to every peer (same_node.hpp).
collective::SameNodeShape allgather_shape(const collective::Group& g, bool in_place) {
  collective::SameNodeShape shape;
  shape.exchange = collective::SameNodeShape::Exchange::Allgather;
  shape.send_records = 1;
  shape.recv_records = shape.recv_pieces = g.size;
  shape.source_is_recv = in_place;
  shape.source_first = in_place ? g.rank : 0;  // in place, this rank's piece is its receive slot
  shape.own_send = in_place ? -1 : 0;
  shape.own_recv = g.rank;
  shape.copy_own = !in_place;
  return shape;
}

// A gather's or scatter's own piece at an intracommunicator's root: in place it stays where it
// is (its piece of the root's many-piece side is skipped); else it is copied straight across.
void rooted_own_piece(collective::Call& call, const collective::Group& g, collective::Role role,
                      bool in_place, bool gather) {
  if (role != collective::Role::Root || g.inter) return;
  collective::Side& many = gather ? call.recv : call.send;
  if (in_place) {
    many.pieces()[g.rank].skip = true;
  } else if (gather) {
    collective::copy_own_piece(call, 0, g.rank);
  } else {
    collective::copy_own_piece(call, g.rank, 0);
  }
}

// Whether a rooted call may take the same-node transport: an intracommunicator, and a valid
// root (an invalid one, the same on every rank, is the MPI's to report, once).
bool rooted_on_one_node(const collective::Group& g, int root) {
  return !g.inter && root >= 0 && root < g.size;
}

// The rooted calls' same-node shapes (same_node.hpp). `in_place`: at the root (the send buffer
// of a gather, the receive buffer of a scatter).
collective::SameNodeShape rooted_shape(const collective::Group& g,
                                       collective::SameNodeShape::Exchange exchange, int root,
                                       bool in_place) {
  using Exchange = collective::SameNodeShape::Exchange;
  collective::SameNodeShape shape;
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
  return shape;
}

// What Gather(v) and Scatter(v) share: the group, this rank's role, whether the root works in
// place (the send buffer of a gather, the receive buffer of a scatter), the same-node shape.
struct Rooted {
  collective::Group g;
  collective::Role role = collective::Role::Idle;
  bool gather = true;
  bool in_place = false;
  collective::SameNodeShape shape;
  bool one_node = false;
  const collective::SameNodeShape* same_node() const { return one_node ? &shape : nullptr; }
};

// What the call returns where it goes to the MPI as it is (Strider off, no group, or this rank
// idle); std::nullopt where Strider may serve it (`r` filled in).
template <class Forward>
std::optional<int> rooted_roles(MPI_Comm comm, int root, bool gather, bool in_place, Rooted& r,
                                Forward forward) {
  if (auto rc = collective::forward_unless_grouped(comm, r.g, forward)) return rc;
  r.role = collective::role_of(r.g, root);
  if (r.role == collective::Role::Idle) return forward();
  using Exchange = collective::SameNodeShape::Exchange;
  r.gather = gather;
  r.in_place = in_place;
  r.shape = rooted_shape(r.g, gather ? Exchange::Gather : Exchange::Scatter, root, in_place);
  r.one_node = rooted_on_one_node(r.g, root);
  return std::nullopt;
}

// Whether Strider serves a rooted call: this rank's one piece (`count` of `type` at `piece`: its
// send for a gather, its receive for a scatter; none at an intercommunicator's root or an
// in-place root) and the root's piece per rank (at `spread`, from `spread_specs(specs)`)
// described, and one side converted.
template <class SpreadSpecs>
bool describe_rooted(const Rooted& r, collective::Call& call, const void* piece, int count,
                     MPI_Datatype type, const void* spread, SpreadSpecs spread_specs) {
  collective::Side& one = r.gather ? call.send : call.recv;
  collective::Side& many = r.gather ? call.recv : call.send;
  const bool root = r.role == collective::Role::Root;
  const bool moves_piece = !(r.g.inter && root) && !(root && r.in_place);
  std::vector<collective::PieceSpec> specs;
  return (!moves_piece ||
          (collective::single_spec(count, type, 0, specs) && one.describe(piece, specs))) &&
         (!root || (spread_specs(specs) && many.describe(spread, specs))) &&
         (call.send.converted() || call.recv.converted());
}
}  // namespace

int allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
              MPI_Datatype rtype, MPI_Comm comm, const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Allgather, MPI_Iallgather, MPI_Allgather_init);
  const auto forward = [&] {
    return mpi.forward(form, sbuf, scount, stype, rbuf, rcount, rtype, comm);
  };
  collective::Group g;
  if (const auto rc = collective::forward_unless_grouped(comm, g, forward)) return *rc;
  const bool in_place = sbuf == MPI_IN_PLACE;
  std::vector<collective::PieceSpec> recv_specs;
  auto call = std::make_unique<collective::Call>(comm);
  const bool served = collective::uniform_specs(g.size, rcount, rtype, recv_specs) &&
                      describe_allgather(*call, g, sbuf, scount, stype, rbuf, recv_specs);
  const collective::SameNodeShape shape = allgather_shape(g, in_place);
  return collective::execute(
      std::move(call), served, g.inter ? nullptr : &shape, form, forward,
      [&](collective::Call& c) -> int {
        allgather_own_piece(c, g, in_place);
        return MPI_SUCCESS;
      },
      [&](collective::Call& c, const collective::Form& r) {
        const collective::Uniform s = collective::uniform_args(c.send, sbuf, scount, stype);
        const collective::Uniform d = collective::uniform_args(c.recv, rbuf, rcount, rtype);
        return mpi(r, s.buffer, s.count, s.type, d.buffer, d.count, d.type, comm);
      });
}

int allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
               const int displs[], MPI_Datatype rtype, MPI_Comm comm,
               const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Allgatherv, MPI_Iallgatherv, MPI_Allgatherv_init);
  const auto forward = [&] {
    return mpi.forward(form, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  };
  collective::Group g;
  if (const auto rc = collective::forward_unless_grouped(comm, g, forward)) return *rc;
  const bool in_place = sbuf == MPI_IN_PLACE;
  std::vector<collective::PieceSpec> recv_specs;
  auto call = std::make_unique<collective::Call>(comm);
  const bool served = collective::varying_specs(g.size, rcounts, displs, rtype, recv_specs) &&
                      describe_allgather(*call, g, sbuf, scount, stype, rbuf, recv_specs);
  const collective::SameNodeShape shape = allgather_shape(g, in_place);
  collective::Varying d{};
  return collective::execute(
      std::move(call), served, g.inter ? nullptr : &shape, form, forward,
      [&](collective::Call& c) -> int {
        allgather_own_piece(c, g, in_place);
        return collective::varying_args(c, c.recv, c.recv_args, rcounts, displs, rtype, d);
      },
      [&](collective::Call& c, const collective::Form& r) {
        const collective::Uniform s = collective::uniform_args(c.send, sbuf, scount, stype);
        void* dbuf = collective::wire_or(c.recv, rbuf);
        return mpi(r, s.buffer, s.count, s.type, dbuf, d.counts, d.displs, d.type, comm);
      });
}

int gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
           MPI_Datatype rtype, int root, MPI_Comm comm, const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Gather, MPI_Igather, MPI_Gather_init);
  const auto forward = [&] {
    return mpi.forward(form, sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  };
  Rooted r;
  if (const auto rc = rooted_roles(comm, root, true, sbuf == MPI_IN_PLACE, r, forward)) return *rc;
  auto call = std::make_unique<collective::Call>(comm);
  const bool served = describe_rooted(r, *call, sbuf, scount, stype, rbuf, [&](auto& specs) {
    return collective::uniform_specs(r.g.size, rcount, rtype, specs);
  });
  return collective::execute(
      std::move(call), served, r.same_node(), form, forward,
      [&](collective::Call& c) -> int {
        rooted_own_piece(c, r.g, r.role, r.in_place, true);
        return MPI_SUCCESS;
      },
      [&](collective::Call& c, const collective::Form& q) {
        const collective::Uniform s = collective::uniform_args(c.send, sbuf, scount, stype);
        const collective::Uniform d = collective::uniform_args(c.recv, rbuf, rcount, rtype);
        return mpi(q, s.buffer, s.count, s.type, d.buffer, d.count, d.type, root, comm);
      });
}

int gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
            const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm,
            const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init);
  const auto forward = [&] {
    return mpi.forward(form, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
  };
  Rooted r;
  if (const auto rc = rooted_roles(comm, root, true, sbuf == MPI_IN_PLACE, r, forward)) return *rc;
  auto call = std::make_unique<collective::Call>(comm);
  const bool served = describe_rooted(r, *call, sbuf, scount, stype, rbuf, [&](auto& specs) {
    return collective::varying_specs(r.g.size, rcounts, displs, rtype, specs);
  });
  collective::Varying d{rcounts, displs, rtype};
  return collective::execute(
      std::move(call), served, r.same_node(), form, forward,
      [&](collective::Call& c) -> int {
        rooted_own_piece(c, r.g, r.role, r.in_place, true);
        if (r.role != collective::Role::Root) return MPI_SUCCESS;
        return collective::varying_args(c, c.recv, c.recv_args, rcounts, displs, rtype, d);
      },
      [&](collective::Call& c, const collective::Form& q) {
        const collective::Uniform s = collective::uniform_args(c.send, sbuf, scount, stype);
        void* dbuf = collective::wire_or(c.recv, rbuf);
        return mpi(q, s.buffer, s.count, s.type, dbuf, d.counts, d.displs, d.type, root, comm);
      });
}

int scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount,
            MPI_Datatype rtype, int root, MPI_Comm comm, const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Scatter, MPI_Iscatter, MPI_Scatter_init);
  const auto forward = [&] {
    return mpi.forward(form, sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
  };
  Rooted r;
  if (const auto rc = rooted_roles(comm, root, false, rbuf == MPI_IN_PLACE, r, forward)) return *rc;
  auto call = std::make_unique<collective::Call>(comm);
  const bool served = describe_rooted(r, *call, rbuf, rcount, rtype, sbuf, [&](auto& specs) {
    return collective::uniform_specs(r.g.size, scount, stype, specs);
  });
  return collective::execute(
      std::move(call), served, r.same_node(), form, forward,
      [&](collective::Call& c) -> int {
        rooted_own_piece(c, r.g, r.role, r.in_place, false);
        return MPI_SUCCESS;
      },
      [&](collective::Call& c, const collective::Form& q) {
        const collective::Uniform s = collective::uniform_args(c.send, sbuf, scount, stype);
        const collective::Uniform d = collective::uniform_args(c.recv, rbuf, rcount, rtype);
        return mpi(q, s.buffer, s.count, s.type, d.buffer, d.count, d.type, root, comm);
      });
}

int scatterv(const void* sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
             void* rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
             const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Scatterv, MPI_Iscatterv, MPI_Scatterv_init);
  const auto forward = [&] {
    return mpi.forward(form, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
  };
  Rooted r;
  if (const auto rc = rooted_roles(comm, root, false, rbuf == MPI_IN_PLACE, r, forward)) return *rc;
  auto call = std::make_unique<collective::Call>(comm);
  const bool served = describe_rooted(r, *call, rbuf, rcount, rtype, sbuf, [&](auto& specs) {
    return collective::varying_specs(r.g.size, scounts, displs, stype, specs);
  });
  collective::Varying s{scounts, displs, stype};
  return collective::execute(
      std::move(call), served, r.same_node(), form, forward,
      [&](collective::Call& c) -> int {
        rooted_own_piece(c, r.g, r.role, r.in_place, false);
        if (r.role != collective::Role::Root) return MPI_SUCCESS;
        return collective::varying_args(c, c.send, c.send_args, scounts, displs, stype, s);
      },
      [&](collective::Call& c, const collective::Form& q) {
        void* sb = collective::wire_or(c.send, sbuf);
        const collective::Uniform d = collective::uniform_args(c.recv, rbuf, rcount, rtype);
        return mpi(q, sb, s.counts, s.displs, s.type, d.buffer, d.count, d.type, root, comm);
      });
}

int bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
          const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Bcast, MPI_Ibcast, MPI_Bcast_init);
  const auto forward = [&] { return mpi.forward(form, buf, count, type, root, comm); };
  collective::Group g;
  if (const auto rc = collective::forward_unless_grouped(comm, g, forward)) return *rc;
  const collective::Role role = collective::role_of(g, root);
  if (role == collective::Role::Idle) return forward();
  auto call = std::make_unique<collective::Call>(comm);
  std::vector<collective::PieceSpec> specs;
  collective::Side& side = role == collective::Role::Root ? call->send : call->recv;
  const bool served = collective::single_spec(count, type, 0, specs) && side.describe(buf, specs) &&
                      side.converted();
  const collective::SameNodeShape shape =
      rooted_shape(g, collective::SameNodeShape::Exchange::Bcast, root, false);
  const collective::SameNodeShape* same_node = rooted_on_one_node(g, root) ? &shape : nullptr;
  return collective::execute(
      std::move(call), served, same_node, form, forward, collective::nothing_to_prepare,
      [&](collective::Call& c, const collective::Form& r) {
        const collective::Uniform u = collective::uniform_args(
            role == collective::Role::Root ? c.send : c.recv, buf, count, type);
        return mpi(r, u.buffer, u.count, u.type, root, comm);
      });
}

}  // namespace strider::calls
