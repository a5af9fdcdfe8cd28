// A collective's blocking and nonblocking forms in the MPI as one callable, so that each entry
// point (alltoall.cpp, gather.cpp, neighbor.cpp, reduce.cpp) names the MPI's functions once:
// it forwards the application's arguments through it, or serves the wire arguments through it.
#pragma once

#include <mpi.h>

#include "transfer/next.hpp"
#include "transfer/state.hpp"

namespace strider::calls {

template <class Blocking, class Nonblocking>
struct MpiPair {
  Blocking* blocking;
  Nonblocking* nonblocking;

  // The nonblocking form with `request` appended when there is one, else the blocking form.
  template <class... Args>
  int operator()(MPI_Request* request, Args... args) const {
    return request ? nonblocking(args..., request) : blocking(args...);
  }
  // The application's call handed to the MPI unchanged (counted as forwarded).
  template <class... Args>
  int forward(MPI_Request* request, Args... args) const {
    transfer::counters().collectives_forwarded++;
    return (*this)(request, args...);
  }
};

template <class Blocking, class Nonblocking>
MpiPair<Blocking, Nonblocking> mpi_pair(Blocking* blocking, Nonblocking* nonblocking) {
  return {blocking, nonblocking};
}

}  // namespace strider::calls

// Inside a collective's entry: the MPI's (or the next tool's) `blocking` and `nonblocking`.
#define STRIDER_MPI_PAIR(blocking, nonblocking) \
  ::strider::calls::mpi_pair(STRIDER_NEXT(blocking), STRIDER_NEXT(nonblocking))
