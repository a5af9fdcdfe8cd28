// MPI-4's large-count collectives (`_c`) with count and displacement arrays, for MPIs that have
// them: blocking, nonblocking and persistent. Served through the classic paths where every count
// and displacement fits an int (calls/large_count.hpp). The ints are Strider's own arrays, kept
// with a served call until it completes or is freed (collective::Form::narrowed), since the MPI
// may read them until then; a call Strider does not serve, or one whose values do not fit, is the
// MPI's own `_c` call on the application's arrays (Form::original).
#include <mpi.h>

#include <memory>

#include "calls/collectives.hpp"
#include "calls/large_count.hpp"
#include "calls/mpi_forms.hpp"
#include "interpose/large_count_forms.hpp"

using strider::calls::fits_int;
using strider::calls::narrow_all;
using strider::calls::NarrowedArrays;
using strider::collective::Form;
using strider::transfer::ProgressOrphans;
namespace calls = strider::calls;

// The three `_c` forms of a collective with count arrays: `body(ARGS, form)` serves each.
#define STRIDER_LARGE_COUNT_ARRAY_FORMS(Name, IName, body, PARAMS, ARGS)        \
  STRIDER_EXPORT int MPI_##Name##_c PARAMS {                                    \
    const strider::calls::EntryCall entry;                                      \
    ProgressOrphans progress;                                                   \
    return body(STRIDER_ARGS ARGS, Form{});                                     \
  }                                                                             \
  STRIDER_EXPORT int MPI_##IName##_c STRIDER_WITH_REQUEST PARAMS {              \
    const strider::calls::EntryCall entry;                                      \
    ProgressOrphans progress;                                                   \
    return body(STRIDER_ARGS ARGS, Form{request});                              \
  }                                                                             \
  STRIDER_LARGE_COUNT_INIT(Name, IName, (sbuf, rbuf), PARAMS, ARGS, (void)next; \
                           return body(STRIDER_ARGS ARGS, form);)

namespace {

// `form` for the classic path: the application's own `_c` call kept as the way to the MPI, and
// the narrowed arrays kept with the call.
Form narrowed_form(Form form, std::function<int()> original,
                   std::shared_ptr<const NarrowedArrays> narrowed) {
  form.original = std::move(original);
  form.narrowed = std::move(narrowed);
  return form;
}

int allgatherv(const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf,
               const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype,
               MPI_Comm comm, const Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Allgatherv_c, MPI_Iallgatherv_c, MPI_Allgatherv_init_c);
  const auto original = [=] {
    return mpi(form, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  };
  const int n = calls::array_peers(comm);
  auto a = std::make_shared<NarrowedArrays>();
  if (!fits_int({scount}) || !narrow_all(rcounts, n, a->recv_counts) ||
      !narrow_all(displs, n, a->recv_displs)) {
    return original();
  }
  return calls::allgatherv(sbuf, static_cast<int>(scount), stype, rbuf, a->recv_counts.data(),
                           a->recv_displs.data(), rtype, comm, narrowed_form(form, original, a));
}

int alltoallv(const void* sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
              MPI_Datatype stype, void* rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[],
              MPI_Datatype rtype, MPI_Comm comm, const Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Alltoallv_c, MPI_Ialltoallv_c, MPI_Alltoallv_init_c);
  const auto original = [=] {
    return mpi(form, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  };
  const int n = calls::array_peers(comm);
  auto a = std::make_shared<NarrowedArrays>();
  if (!a->narrow(sbuf, scounts, sdispls, n, rcounts, rdispls, n)) return original();
  return calls::alltoallv(sbuf, a->send_counts.data(), a->send_displs.data(), stype, rbuf,
                          a->recv_counts.data(), a->recv_displs.data(), rtype, comm,
                          narrowed_form(form, original, a));
}

int alltoallw(const void* sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
              const MPI_Datatype stypes[], void* rbuf, const MPI_Count rcounts[],
              const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
              const Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Alltoallw_c, MPI_Ialltoallw_c, MPI_Alltoallw_init_c);
  const auto original = [=] {
    return mpi(form, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
  };
  const int n = calls::array_peers(comm);
  auto a = std::make_shared<NarrowedArrays>();
  if (!a->narrow(sbuf, scounts, sdispls, n, rcounts, rdispls, n)) return original();
  return calls::alltoallw(sbuf, a->send_counts.data(), a->send_displs.data(), stypes, rbuf,
                          a->recv_counts.data(), a->recv_displs.data(), rtypes, comm,
                          narrowed_form(form, original, a));
}

// The root's arrays only: elsewhere they are not significant (and may be null).
int gatherv(const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf,
            const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, int root,
            MPI_Comm comm, const Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Gatherv_c, MPI_Igatherv_c, MPI_Gatherv_init_c);
  const auto original = [=] {
    return mpi(form, sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
  };
  const int n = calls::root_array_peers(comm, root);
  auto a = std::make_shared<NarrowedArrays>();
  if (!fits_int({scount}) || !narrow_all(rcounts, n, a->recv_counts) ||
      !narrow_all(displs, n, a->recv_displs)) {
    return original();
  }
  return calls::gatherv(sbuf, static_cast<int>(scount), stype, rbuf, a->recv_counts.data(),
                        a->recv_displs.data(), rtype, root, comm, narrowed_form(form, original, a));
}

int scatterv(const void* sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
             MPI_Datatype stype, void* rbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
             MPI_Comm comm, const Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Scatterv_c, MPI_Iscatterv_c, MPI_Scatterv_init_c);
  const auto original = [=] {
    return mpi(form, sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
  };
  const int n = calls::root_array_peers(comm, root);
  auto a = std::make_shared<NarrowedArrays>();
  if (!fits_int({rcount}) || !narrow_all(scounts, n, a->send_counts) ||
      !narrow_all(displs, n, a->send_displs)) {
    return original();
  }
  return calls::scatterv(sbuf, a->send_counts.data(), a->send_displs.data(), stype, rbuf,
                         static_cast<int>(rcount), rtype, root, comm,
                         narrowed_form(form, original, a));
}

// A count per process of the (local) group.
int reduce_scatter(const void* sbuf, void* rbuf, const MPI_Count rcounts[], MPI_Datatype type,
                   MPI_Op op, MPI_Comm comm, const Form& form) {
  const auto mpi =
      STRIDER_MPI_FORMS(MPI_Reduce_scatter_c, MPI_Ireduce_scatter_c, MPI_Reduce_scatter_init_c);
  const auto original = [=] { return mpi(form, sbuf, rbuf, rcounts, type, op, comm); };
  int n = -1;
  if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &n) != MPI_SUCCESS) return original();
  auto a = std::make_shared<NarrowedArrays>();
  if (!narrow_all(rcounts, n, a->recv_counts)) return original();
  return calls::reduce_scatter(sbuf, rbuf, a->recv_counts.data(), type, op, comm,
                               narrowed_form(form, original, a));
}

int neighbor_allgatherv(const void* sbuf, MPI_Count scount, MPI_Datatype stype, void* rbuf,
                        const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype,
                        MPI_Comm comm, const Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Neighbor_allgatherv_c, MPI_Ineighbor_allgatherv_c,
                                     MPI_Neighbor_allgatherv_init_c);
  const auto original = [=] {
    return mpi(form, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
  };
  int in = -1, out = -1;
  auto a = std::make_shared<NarrowedArrays>();
  if (!calls::neighbor_degrees(comm, in, out) || !fits_int({scount}) ||
      !narrow_all(rcounts, in, a->recv_counts) || !narrow_all(displs, in, a->recv_displs)) {
    return original();
  }
  return calls::neighbor_allgatherv(sbuf, static_cast<int>(scount), stype, rbuf,
                                    a->recv_counts.data(), a->recv_displs.data(), rtype, comm,
                                    narrowed_form(form, original, a));
}

int neighbor_alltoallv(const void* sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                       MPI_Datatype stype, void* rbuf, const MPI_Count rcounts[],
                       const MPI_Aint rdispls[], MPI_Datatype rtype, MPI_Comm comm,
                       const Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Neighbor_alltoallv_c, MPI_Ineighbor_alltoallv_c,
                                     MPI_Neighbor_alltoallv_init_c);
  const auto original = [=] {
    return mpi(form, sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
  };
  int in = -1, out = -1;
  auto a = std::make_shared<NarrowedArrays>();
  if (!calls::neighbor_degrees(comm, in, out) ||
      !a->narrow(sbuf, scounts, sdispls, out, rcounts, rdispls, in)) {
    return original();
  }
  return calls::neighbor_alltoallv(sbuf, a->send_counts.data(), a->send_displs.data(), stype, rbuf,
                                   a->recv_counts.data(), a->recv_displs.data(), rtype, comm,
                                   narrowed_form(form, original, a));
}

// The displacements are MPI_Aint in the classic form too: only the counts are narrowed.
int neighbor_alltoallw(const void* sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],
                       const MPI_Datatype stypes[], void* rbuf, const MPI_Count rcounts[],
                       const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                       const Form& form) {
  const auto mpi = STRIDER_MPI_FORMS(MPI_Neighbor_alltoallw_c, MPI_Ineighbor_alltoallw_c,
                                     MPI_Neighbor_alltoallw_init_c);
  const auto original = [=] {
    return mpi(form, sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
  };
  int in = -1, out = -1;
  auto a = std::make_shared<NarrowedArrays>();
  if (!calls::neighbor_degrees(comm, in, out) || !narrow_all(scounts, out, a->send_counts) ||
      !narrow_all(rcounts, in, a->recv_counts)) {
    return original();
  }
  return calls::neighbor_alltoallw(sbuf, a->send_counts.data(), sdispls, stypes, rbuf,
                                   a->recv_counts.data(), rdispls, rtypes, comm,
                                   narrowed_form(form, original, a));
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
