// Reductions: the MPI's own operation on host mirrors of the GPU buffers (mirror.hpp), with
// the application's type and op. Each buffer is mirrored with the elements the standard says
// it holds on this rank, an input loaded before the call and an output stored after.
#include <algorithm>
#include <numeric>
#include <optional>

#include "calls/collectives.hpp"
#include "calls/mpi_forms.hpp"
#include "collective/call.hpp"
#include "collective/roles.hpp"
#include "collective/same_node_reduce.hpp"
#include "collective/specs.hpp"
#include "runtime/log.hpp"
#include "transfer/next.hpp"
#include "transfer/staged.hpp"
#include "transfer/state.hpp"

namespace strider::calls {
namespace {

// The reduction's two buffers, each mirrored if Strider moves it.
struct Buffers {
  const void* send;
  void* recv;
  int send_mirror = -1, recv_mirror = -1;  // indices into call.mirrors
  const void* send_arg(const collective::Call& c) const {
    return send_mirror >= 0 ? c.mirrors[send_mirror].origin() : send;
  }
  void* recv_arg(const collective::Call& c) const {
    return recv_mirror >= 0 ? c.mirrors[recv_mirror].origin() : recv;
  }
};

// Mirrors `buffer` if Strider moves it; returns its mirror's index or -1.
int mirror(collective::Call& call, const void* buffer, int count, MPI_Datatype type, bool input,
           bool output) {
  collective::Mirror m;
  if (!m.describe(buffer, count, type, input, output)) return -1;
  call.mirrors.push_back(std::move(m));
  return static_cast<int>(call.mirrors.size()) - 1;
}

// `send_count`/`recv_count`: elements the buffers hold on this rank (-1: not significant).
// In place, the receive buffer is also the input.
// `load_recv`: the receive buffer's contents must survive where the MPI leaves it undefined.
// The same buffer as both without MPI_IN_PLACE is erroneous: it is mirrored once and the MPI
// gets that mirror as both, so that it checks (and reports, or accepts) the alias as it would.
bool mirror_both(collective::Call& call, Buffers& b, int send_count, int recv_count,
                 MPI_Datatype type, bool load_recv = false) {
  const bool in_place = b.send == MPI_IN_PLACE;
  const bool aliased = !in_place && b.send == b.recv && send_count >= 0 && recv_count >= 0;
  if (send_count >= 0 && !in_place && !aliased) {
    b.send_mirror = mirror(call, b.send, send_count, type, true, false);
  }
  if (recv_count >= 0) {
    b.recv_mirror = mirror(call, b.recv, aliased ? std::max(send_count, recv_count) : recv_count,
                           type, in_place || load_recv || aliased, true);
    if (aliased) b.send_mirror = b.recv_mirror;
  }
  return !call.mirrors.empty();
}

// An intercommunicator's reduce-scatter and scan are left to the MPI with host buffers only.
int not_served(MPI_Comm comm, const char* what) {
  return transfer::report_error(comm, what, "GPU buffers on an intercommunicator are not served");
}

// Whether a reduction's arguments are ones Strider reports itself, since MPIs abort on them
// instead of returning an error: a negative count (MPICH 4.0 asserts) or MPI_DATATYPE_NULL
// (MPICH 5 asserts).
bool refused(bool negative_count, MPI_Datatype type) {
  return negative_count || type == MPI_DATATYPE_NULL;
}

// Reports them: a null op or type is MPI_ERR_OP, as Open MPI 4.1 and MPICH 4.0 report it; a
// negative count MPI_ERR_COUNT.
int bad_arguments(MPI_Comm comm, MPI_Datatype type, MPI_Op op, const char* what) {
  const bool null = op == MPI_OP_NULL || type == MPI_DATATYPE_NULL;
  const int error = null ? MPI_ERR_OP : MPI_ERR_COUNT;
  runtime::log(runtime::LogLevel::Error, "%s: %s", what,
               null ? "a null op or MPI_DATATYPE_NULL" : "negative count");
  PMPI_Comm_call_errhandler(comm, error);
  return error;
}

// What a reduction returns where it goes to the MPI at once (std::nullopt: `g` is its group):
// Strider off, a communicator the MPI must judge (collective::forward_unless_grouped), or a
// large-count call whose counts do not fit an int. A reduction's counts are alike on every rank,
// so that one forwards only where all do.
template <class Forward>
std::optional<int> forwarded_at_once(const collective::Form& form, MPI_Comm comm,
                                     collective::Group& g, Forward forward) {
  if (form.forward_only) return forward();
  return collective::forward_unless_grouped(comm, g, forward);
}

// A blocking call whose ranks all run on one node is first offered to the GPUs
// (same_node_reduce.hpp): every rank asks, whatever its buffers. In place, the input is the
// receive buffer; `sbuf == rbuf` otherwise is the MPI's to report.
bool on_gpus(MPI_Comm comm, const collective::Form& form, const void* sbuf, void* rbuf,
             collective::ReductionShape shape, int& rc) {
  if (!form.blocking()) return false;
  shape.input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
  shape.output = rbuf;
  shape.aliased = sbuf == rbuf;
  return collective::same_node_reduction(comm, shape, rc);
}

}  // namespace

int reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
           MPI_Comm comm, const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Reduce, MPI_Ireduce, MPI_Reduce_init);
  const auto forward = [&] { return mpi.forward(form, sbuf, rbuf, count, type, op, root, comm); };
  collective::Group g;
  if (const auto rc = forwarded_at_once(form, comm, g, forward)) return *rc;
  const collective::Role role = collective::role_of(g, root);
  // An idle rank's arguments are not significant (an intercommunicator's MPI_PROC_NULL ranks).
  if (role == collective::Role::Idle) return forward();
  if (refused(count < 0, type)) return bad_arguments(comm, type, op, "MPI_Reduce");
  const bool root_here = role == collective::Role::Root;
  int rc = MPI_SUCCESS;
  if (!g.inter &&
      on_gpus(comm, form, root_here || sbuf != MPI_IN_PLACE ? sbuf : nullptr,
              root_here ? rbuf : nullptr,
              {type, op, nullptr, count, nullptr, root_here ? count : 0, 0, g.size}, rc)) {
    return rc;
  }
  auto call = std::make_unique<collective::Call>(comm);
  Buffers b{sbuf, rbuf};
  const int send_count = g.inter && role == collective::Role::Root ? -1 : count;
  const int recv_count = role == collective::Role::Root ? count : -1;
  if (!mirror_both(*call, b, send_count, recv_count, type)) return forward();
  collective::Call& c = *call;
  return collective::serve(std::move(call), form, [&](const collective::Form& r) {
    return mpi(r, b.send_arg(c), b.recv_arg(c), count, type, op, root, comm);
  });
}

int allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
              const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init);
  const auto forward = [&] { return mpi.forward(form, sbuf, rbuf, count, type, op, comm); };
  collective::Group g;
  if (const auto rc = forwarded_at_once(form, comm, g, forward)) return *rc;
  if (refused(count < 0, type)) return bad_arguments(comm, type, op, "MPI_Allreduce");
  int rc = MPI_SUCCESS;
  if (on_gpus(comm, form, sbuf, rbuf, {type, op, nullptr, count, nullptr, count, 0, g.size}, rc)) {
    return rc;
  }
  auto call = std::make_unique<collective::Call>(comm);
  Buffers b{sbuf, rbuf};
  if (!mirror_both(*call, b, count, count, type)) return forward();
  collective::Call& c = *call;
  return collective::serve(std::move(call), form, [&](const collective::Form& r) {
    return mpi(r, b.send_arg(c), b.recv_arg(c), count, type, op, comm);
  });
}

int reduce_scatter(const void* sbuf, void* rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op,
                   MPI_Comm comm, const collective::Form& form) {
  const auto mpi =
      STRIDER_MPI_FORMS(MPI_Reduce_scatter, MPI_Ireduce_scatter, MPI_Reduce_scatter_init);
  const auto forward = [&] { return mpi.forward(form, sbuf, rbuf, rcounts, type, op, comm); };
  collective::Group g;
  if (const auto rc = forwarded_at_once(form, comm, g, forward)) return *rc;
  int size = 0;
  PMPI_Comm_size(comm, &size);
  if (refused(collective::negative(size, rcounts), type)) {
    return bad_arguments(comm, type, op, "MPI_Reduce_scatter");
  }
  const long long total = std::accumulate(rcounts, rcounts + size, 0LL);
  if (total > INT_MAX) return forward();
  const bool in_place = sbuf == MPI_IN_PLACE;
  int rc = MPI_SUCCESS;
  if (!g.inter && on_gpus(comm, form, sbuf, rbuf,
                          {type, op, nullptr, static_cast<int>(total), nullptr, rcounts[g.rank],
                           std::accumulate(rcounts, rcounts + g.rank, 0), g.size},
                          rc)) {
    return rc;
  }
  auto call = std::make_unique<collective::Call>(comm);
  Buffers b{sbuf, rbuf};
  if (!mirror_both(*call, b, static_cast<int>(total),
                   in_place ? static_cast<int>(total) : rcounts[g.rank], type)) {
    return forward();
  }
  if (g.inter) return not_served(comm, "MPI_Reduce_scatter");
  collective::Call& c = *call;
  return collective::serve(std::move(call), form, [&](const collective::Form& r) {
    return mpi(r, b.send_arg(c), b.recv_arg(c), rcounts, type, op, comm);
  });
}

int reduce_scatter_block(const void* sbuf, void* rbuf, int rcount, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm, const collective::Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block,
                                     MPI_Reduce_scatter_block_init);
  const auto forward = [&] { return mpi.forward(form, sbuf, rbuf, rcount, type, op, comm); };
  collective::Group g;
  if (const auto rc = forwarded_at_once(form, comm, g, forward)) return *rc;
  if (refused(rcount < 0, type)) {
    return bad_arguments(comm, type, op, "MPI_Reduce_scatter_block");
  }
  int size = 0;
  PMPI_Comm_size(comm, &size);
  const long long total = static_cast<long long>(rcount) * size;
  if (total > INT_MAX) return forward();
  const bool in_place = sbuf == MPI_IN_PLACE;
  int rc = MPI_SUCCESS;
  if (!g.inter && on_gpus(comm, form, sbuf, rbuf,
                          {type, op, nullptr, static_cast<int>(total), nullptr, rcount,
                           rcount * g.rank, g.size},
                          rc)) {
    return rc;
  }
  auto call = std::make_unique<collective::Call>(comm);
  Buffers b{sbuf, rbuf};
  if (!mirror_both(*call, b, static_cast<int>(total), in_place ? static_cast<int>(total) : rcount,
                   type)) {
    return forward();
  }
  if (g.inter) return not_served(comm, "MPI_Reduce_scatter_block");
  collective::Call& c = *call;
  return collective::serve(std::move(call), form, [&](const collective::Form& r) {
    return mpi(r, b.send_arg(c), b.recv_arg(c), rcount, type, op, comm);
  });
}

namespace {

// MPI_Scan and MPI_Exscan (`exclusive`), through `mpi` (their pair of MPI calls): rank i
// reduces the inputs of ranks 0..i (0..i-1 for Exscan, whose rank 0 gets nothing).
template <class Pair>
int prefix_reduction(const Pair& mpi, const char* name, bool exclusive, const void* sbuf,
                     void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                     const collective::Form& form) {
  const auto forward = [&] { return mpi.forward(form, sbuf, rbuf, count, type, op, comm); };
  collective::Group g;
  if (const auto rc = forwarded_at_once(form, comm, g, forward)) return *rc;
  if (refused(count < 0, type)) return bad_arguments(comm, type, op, name);
  if (g.inter) return forward();
  int rc = MPI_SUCCESS;
  const int outputs = exclusive && g.rank == 0 ? 0 : count;
  const int inputs = exclusive ? g.rank : g.rank + 1;
  if (on_gpus(comm, form, sbuf, rbuf, {type, op, nullptr, count, nullptr, outputs, 0, inputs},
              rc)) {
    return rc;
  }
  auto call = std::make_unique<collective::Call>(comm);
  Buffers b{sbuf, rbuf};
  // Exscan's rank 0 receive buffer is undefined after the call: loaded, so it comes back
  // unchanged.
  if (!mirror_both(*call, b, count, count, type, exclusive)) return forward();
  collective::Call& c = *call;
  return collective::serve(std::move(call), form, [&](const collective::Form& r) {
    return mpi(r, b.send_arg(c), b.recv_arg(c), count, type, op, comm);
  });
}

}  // namespace

int scan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
         const collective::Form& form) {
  return prefix_reduction(STRIDER_MPI_FORMS(MPI_Scan, MPI_Iscan, MPI_Scan_init), "MPI_Scan", false,
                          sbuf, rbuf, count, type, op, comm, form);
}

int exscan(const void* sbuf, void* rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
           const collective::Form& form) {
  return prefix_reduction(STRIDER_MPI_FORMS(MPI_Exscan, MPI_Iexscan, MPI_Exscan_init), "MPI_Exscan",
                          true, sbuf, rbuf, count, type, op, comm, form);
}

}  // namespace strider::calls
