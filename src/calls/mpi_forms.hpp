// A collective's blocking, nonblocking and persistent forms in the MPI as one callable, so that
// each entry point (alltoall.cpp, gather.cpp, neighbor.cpp, reduce.cpp) names the MPI's functions
// once: it forwards the application's arguments through it, or serves the wire arguments through
// it, in the form the application called (collective/form.hpp).
#pragma once

#include <mpi.h>

#include "collective/form.hpp"
#include "transfer/next.hpp"
#include "transfer/state.hpp"

namespace strider::calls {

// Where the MPI has no persistent collectives (MPI-3.1): no entry point reaches it.
struct NoPersistentForm {};

template <class Blocking, class Nonblocking, class Persistent>
struct MpiForms {
  Blocking* blocking;
  Nonblocking* nonblocking;
  Persistent* persistent;

  // The form `form` names: `request` (and the info) appended for the nonblocking and persistent
  // ones.
  template <class... Args>
  int operator()(const collective::Form& form, Args... args) const {
    if (form.is_persistent) {
      if constexpr (std::is_same_v<Persistent, NoPersistentForm>) {
        return MPI_ERR_INTERN;
      } else {
        return persistent(args..., form.info, form.request);
      }
    }
    return form.request ? nonblocking(args..., form.request) : blocking(args...);
  }
  // The application's call handed to the MPI unchanged (counted as forwarded): a large-count
  // call as the application made it (Form::original).
  template <class... Args>
  int forward(const collective::Form& form, Args... args) const {
    transfer::counters().collectives_forwarded++;
    if (form.original) return form.original();
    return (*this)(form, args...);
  }
};

template <class Blocking, class Nonblocking, class Persistent>
MpiForms<Blocking, Nonblocking, Persistent> mpi_forms(Blocking* blocking, Nonblocking* nonblocking,
                                                      Persistent* persistent) {
  return {blocking, nonblocking, persistent};
}

}  // namespace strider::calls

// Inside a collective's entry: the MPI's (or the next tool's) `blocking`, `nonblocking` and, on
// an MPI that has them, `persistent` forms.
#if STRIDER_HAVE_MPI4_PERSISTENT_COLL
#define STRIDER_MPI_FORMS(blocking, nonblocking, persistent)                     \
  ::strider::calls::mpi_forms(STRIDER_NEXT(blocking), STRIDER_NEXT(nonblocking), \
                              STRIDER_NEXT(persistent))
#else
#define STRIDER_MPI_FORMS(blocking, nonblocking, persistent)                     \
  ::strider::calls::mpi_forms(STRIDER_NEXT(blocking), STRIDER_NEXT(nonblocking), \
                              static_cast<::strider::calls::NoPersistentForm*>(nullptr))
#endif
