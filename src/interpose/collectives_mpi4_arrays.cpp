// MPI-4's large-count collectives (`_c`) with count and displacement arrays, for MPIs that have
// them: blocking, nonblocking and persistent. Served through the classic paths where every count
// and displacement fits an int (calls/large_count.hpp). The ints are Strider's own arrays, kept
// with a served call until it completes or is freed (collective::Form::narrowed), since the MPI
// may read them until then; a call Strider does not serve, or one whose values do not fit, is the
// MPI's own `_c` call on the application's arrays (Form::original).
#include <mpi.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "calls/collectives.hpp"
#include "calls/large_count.hpp"
#include "collective/specs.hpp"
#include "interpose/large_count_forms.hpp"

using strider::calls::fits_int;
using strider::calls::narrow_all;
using strider::calls::NarrowedArrays;
using strider::collective::Form;
namespace calls = strider::calls;

// The three `_c` forms of a collective with count arrays: `body(ARGS, form, original)` serves
// each.
#define STRIDER_LARGE_COUNT_ARRAY_FORMS(Name, IName, body, PARAMS, ARGS)          \
  STRIDER_LARGE_COUNT_ENTRIES(Name, IName, (sbuf, rbuf), PARAMS, ARGS,            \
                              [&](const Form& form_, const auto& original_) {     \
                                return body(STRIDER_ARGS ARGS, form_, original_); \
                              })

namespace {

using Original = std::function<int()>;

// Each body narrows its arrays (calls/large_count.hpp) and calls the classic one. Where a value
// does not fit, the arrays hold zeros and the call forwards only (Form::forward_only): a
// blocking call still takes the steps every rank takes, since other ranks' values may fit.

int allgatherv(const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf,
               const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype,
               MPI_Comm comm, const Form& form, const Original& original) {
  int rejected = MPI_SUCCESS;
  const int n = calls::array_peers(comm, rejected);
  if (rejected != MPI_SUCCESS) return rejected;  // the MPI rejected the communicator
  auto a = std::make_shared<NarrowedArrays>();
  const bool fits = fits_int({scount}) && narrow_all(rcounts, n, a->recv_counts) &&
                    narrow_all(displs, n, a->recv_displs);
  if (!fits) a->zero(0, n);
  return calls::allgatherv(sbuf, calls::narrow_or_zero(scount), stype, rbuf, a->recv_counts.data(),
                           a->recv_displs.data(), rtype, comm,
                           calls::large_count_form(form, fits, original, a));
}

int alltoallv(const void* sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
              MPI_Datatype stype, void* rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
              MPI_Datatype rtype, MPI_Comm comm, const Form& form, const Original& original) {
  int rejected = MPI_SUCCESS;
  const int n = calls::array_peers(comm, rejected);
  if (rejected != MPI_SUCCESS) return rejected;  // the MPI rejected the communicator
  auto a = std::make_shared<NarrowedArrays>();
  const bool fits = a->narrow(sbuf, scounts, sdispls, n, rcounts, rdispls, n);
  if (!fits) a->zero(n, n);
  return calls::alltoallv(sbuf, a->send_counts.data(), a->send_displs.data(), stype, rbuf,
                          a->recv_counts.data(), a->recv_displs.data(), rtype, comm,
                          calls::large_count_form(form, fits, original, a));
}

int alltoallw(const void* sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
              const MPI_Datatype stypes[], void* rbuf, const MPI_Count rcounts[],
              const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
              const Form& form, const Original& original) {
  int rejected = MPI_SUCCESS;
  const int n = calls::array_peers(comm, rejected);
  if (rejected != MPI_SUCCESS) return rejected;  // the MPI rejected the communicator
  auto a = std::make_shared<NarrowedArrays>();
  const bool fits = a->narrow(sbuf, scounts, sdispls, n, rcounts, rdispls, n);
  if (!fits) a->zero(n, n);
  return calls::alltoallw(sbuf, a->send_counts.data(), a->send_displs.data(), stypes, rbuf,
                          a->recv_counts.data(), a->recv_displs.data(), rtypes, comm,
                          calls::large_count_form(form, fits, original, a));
}

// The root's arrays only: elsewhere they are not significant (and may be null).
int gatherv(const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf,
            const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, int root,
            MPI_Comm comm, const Form& form, const Original& original) {
  int rejected = MPI_SUCCESS;
  const int n = calls::root_array_peers(comm, root, rejected);
  if (rejected != MPI_SUCCESS) return rejected;  // the MPI rejected the communicator
  auto a = std::make_shared<NarrowedArrays>();
  const bool fits = fits_int({scount}) && narrow_all(rcounts, n, a->recv_counts) &&
                    narrow_all(displs, n, a->recv_displs);
  if (!fits) a->zero(0, n);
  return calls::gatherv(sbuf, calls::narrow_or_zero(scount), stype, rbuf, a->recv_counts.data(),
                        a->recv_displs.data(), rtype, root, comm,
                        calls::large_count_form(form, fits, original, a));
}

int scatterv(const void* sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
             MPI_Datatype stype, void* rbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
             MPI_Comm comm, const Form& form, const Original& original) {
  int rejected = MPI_SUCCESS;
  const int n = calls::root_array_peers(comm, root, rejected);
  if (rejected != MPI_SUCCESS) return rejected;  // the MPI rejected the communicator
  auto a = std::make_shared<NarrowedArrays>();
  const bool fits = fits_int({rcount}) && narrow_all(scounts, n, a->send_counts) &&
                    narrow_all(displs, n, a->send_displs);
  if (!fits) a->zero(n, 0);
  return calls::scatterv(sbuf, a->send_counts.data(), a->send_displs.data(), stype, rbuf,
                         calls::narrow_or_zero(rcount), rtype, root, comm,
                         calls::large_count_form(form, fits, original, a));
}

// A count per process of the (local) group, alike on every rank.
int reduce_scatter(const void* sbuf, void* rbuf, const MPI_Count rcounts[], MPI_Datatype type,
                   MPI_Op op, MPI_Comm comm, const Form& form, const Original& original) {
  int n = -1;
  if (comm == MPI_COMM_NULL) return original();
  // An error: the MPI rejected the communicator (its error handler has run).
  if (const int rc = PMPI_Comm_size(comm, &n); rc != MPI_SUCCESS) return rc;
  auto a = std::make_shared<NarrowedArrays>();
  const bool fits = narrow_all(rcounts, n, a->recv_counts);
  if (!fits) a->zero(0, n);
  return calls::reduce_scatter(sbuf, rbuf, a->recv_counts.data(), type, op, comm,
                               calls::large_count_form(form, fits, original, a));
}

int neighbor_allgatherv(const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf,
                        const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype,
                        MPI_Comm comm, const Form& form, const Original& original) {
  int in = -1, out = -1;
  int rejected = MPI_SUCCESS;
  if (!calls::neighbor_degrees(comm, in, out, rejected)) {
    return strider::collective::forward_unless_rejected(rejected, original);
  }
  auto a = std::make_shared<NarrowedArrays>();
  const bool fits = fits_int({scount}) && narrow_all(rcounts, in, a->recv_counts) &&
                    narrow_all(displs, in, a->recv_displs);
  if (!fits) a->zero(0, in);
  return calls::neighbor_allgatherv(sbuf, calls::narrow_or_zero(scount), stype, rbuf,
                                    a->recv_counts.data(), a->recv_displs.data(), rtype, comm,
                                    calls::large_count_form(form, fits, original, a));
}

int neighbor_alltoallv(const void* sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                       MPI_Datatype stype, void* rbuf, const MPI_Count rcounts[],
                       const MPI_Aint rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                       const Form& form, const Original& original) {
  int in = -1, out = -1;
  int rejected = MPI_SUCCESS;
  if (!calls::neighbor_degrees(comm, in, out, rejected)) {
    return strider::collective::forward_unless_rejected(rejected, original);
  }
  auto a = std::make_shared<NarrowedArrays>();
  const bool fits = a->narrow(sbuf, scounts, sdispls, out, rcounts, rdispls, in);
  if (!fits) a->zero(out, in);
  return calls::neighbor_alltoallv(sbuf, a->send_counts.data(), a->send_displs.data(), stype, rbuf,
                                   a->recv_counts.data(), a->recv_displs.data(), rtype, comm,
                                   calls::large_count_form(form, fits, original, a));
}

// The displacements are MPI_Aint in the classic form too: only the counts are narrowed.
int neighbor_alltoallw(const void* sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                       const MPI_Datatype stypes[], void* rbuf, const MPI_Count rcounts[],
                       const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                       const Form& form, const Original& original) {
  int in = -1, out = -1;
  int rejected = MPI_SUCCESS;
  if (!calls::neighbor_degrees(comm, in, out, rejected)) {
    return strider::collective::forward_unless_rejected(rejected, original);
  }
  auto a = std::make_shared<NarrowedArrays>();
  const bool fits =
      narrow_all(scounts, out, a->send_counts) && narrow_all(rcounts, in, a->recv_counts);
  // Forwarding only, the classic body reads zeros, never the application's arrays.
  std::vector<MPI_Aint> zeros;
  if (!fits) {
    a->zero(out, in);
    zeros.assign(static_cast<std::size_t>(std::max({out, in, 1})), 0);
  }
  return calls::neighbor_alltoallw(sbuf, a->send_counts.data(), fits ? sdispls : zeros.data(),
                                   stypes, rbuf, a->recv_counts.data(),
                                   fits ? rdispls : zeros.data(), rtypes, comm,
                                   calls::large_count_form(form, fits, original, a));
}

}  // namespace

// clang-format off
STRIDER_LARGE_COUNT_ARRAY_FORMS(Allgatherv, Iallgatherv, allgatherv,
    (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, MPI_Comm comm),
    (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm))
STRIDER_LARGE_COUNT_ARRAY_FORMS(Alltoallv, Ialltoallv, alltoallv,
    (const void* sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], MPI_Datatype stype, void* rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rtype, MPI_Comm comm),
    (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm))
STRIDER_LARGE_COUNT_ARRAY_FORMS(Alltoallw, Ialltoallw, alltoallw,
    (const void* sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], const MPI_Datatype stypes[], void* rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm),
    (sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm))
STRIDER_LARGE_COUNT_ARRAY_FORMS(Gatherv, Igatherv, gatherv,
    (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, int root, MPI_Comm comm),
    (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm))
STRIDER_LARGE_COUNT_ARRAY_FORMS(Scatterv, Iscatterv, scatterv,
    (const void* sbuf, const MPI_Count scounts[], const MPI_Aint displs[], MPI_Datatype stype, void* rbuf, MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm),
    (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm))
STRIDER_LARGE_COUNT_ARRAY_FORMS(Reduce_scatter, Ireduce_scatter, reduce_scatter,
    (const void* sbuf, void* rbuf, const MPI_Count rcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm),
    (sbuf, rbuf, rcounts, type, op, comm))
STRIDER_LARGE_COUNT_ARRAY_FORMS(Neighbor_allgatherv, Ineighbor_allgatherv, neighbor_allgatherv,
    (const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf, const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, MPI_Comm comm),
    (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm))
STRIDER_LARGE_COUNT_ARRAY_FORMS(Neighbor_alltoallv, Ineighbor_alltoallv, neighbor_alltoallv,
    (const void* sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], MPI_Datatype stype, void* rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rtype, MPI_Comm comm),
    (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm))
STRIDER_LARGE_COUNT_ARRAY_FORMS(Neighbor_alltoallw, Ineighbor_alltoallw, neighbor_alltoallw,
    (const void* sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], const MPI_Datatype stypes[], void* rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm),
    (sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm))
// clang-format on
