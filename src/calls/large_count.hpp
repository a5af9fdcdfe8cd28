// MPI-4's large-count collectives (`_c`: MPI_Count counts, MPI_Aint displacements), which mpi4py
// calls wherever the MPI has them, served through the classic paths: where every count and
// displacement fits an int, the call is the classic one. Where one does not, the classic path
// only forwards it, to the MPI's own `_c` call (collective::Form::forward_only, original).
#pragma once

#include <mpi.h>

#include <climits>
#include <functional>
#include <initializer_list>
#include <memory>
#include <vector>

#include "collective/form.hpp"

namespace strider::calls {

constexpr bool fits_int(MPI_Count value) { return value >= INT_MIN && value <= INT_MAX; }

inline bool fits_int(std::initializer_list<MPI_Count> values) {
  for (const MPI_Count v : values) {
    if (!fits_int(v)) return false;
  }
  return true;
}

// The `n` values at `in` as ints in `out` (never an empty array: an MPI may reject a null one);
// false where `n` is negative or a value does not fit.
template <class T>
bool narrow_all(const T* in, int n, std::vector<int>& out) {
  out.assign(static_cast<std::size_t>(n > 0 ? n : 1), 0);
  if (n < 0 || (n > 0 && in == nullptr)) return false;  // the MPI reports it
  for (int i = 0; i < n; ++i) {
    if (!fits_int(static_cast<MPI_Count>(in[i]))) return false;
    out[static_cast<std::size_t>(i)] = static_cast<int>(in[i]);
  }
  return true;
}

// The four count and displacement arrays of a v or w form as ints (`send` values on the send
// side, `receive` on the receive side). Under MPI_IN_PLACE the send arrays are not read: the
// receive ones stand in. False where a value does not fit.
struct NarrowedArrays {
  std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
  // All zeros, for a call that forwards only (collective::Form::forward_only).
  void zero(int send, int receive) {
    for (auto* v : {&send_counts, &send_displs})
      v->assign(static_cast<std::size_t>(send > 0 ? send : 1), 0);
    for (auto* v : {&recv_counts, &recv_displs})
      v->assign(static_cast<std::size_t>(receive > 0 ? receive : 1), 0);
  }
  bool narrow(const void* sbuf, const MPI_Count* scounts, const MPI_Aint* sdispls, int send,
              const MPI_Count* rcounts, const MPI_Aint* rdispls, int receive) {
    if (!narrow_all(rcounts, receive, recv_counts) || !narrow_all(rdispls, receive, recv_displs))
      return false;
    if (sbuf != MPI_IN_PLACE) {
      return narrow_all(scounts, send, send_counts) && narrow_all(sdispls, send, send_displs);
    }
    send_counts = recv_counts;
    send_displs = recv_displs;
    return true;
  }
};

// `form` for a large-count call on the classic path (collective::Form): `original`, the
// application's own `_c` call, is how it reaches the MPI where Strider does not serve it; where a
// value does not fit an int (`fits` false) it forwards only; a served call keeps `narrowed`.
inline collective::Form large_count_form(collective::Form form, bool fits,
                                         std::function<int()> original,
                                         std::shared_ptr<const void> narrowed = nullptr) {
  form.original = std::move(original);
  form.narrowed = std::move(narrowed);
  form.forward_only = !fits;
  return form;
}

// An int for a count that fits one; 0 for one that does not (the call then forwards only).
constexpr int narrow_or_zero(MPI_Count value) {
  return fits_int(value) ? static_cast<int>(value) : 0;
}

// How many peers an array argument of a collective on `comm` has (the group's size, the remote
// group's on an intercommunicator); -1 where the MPI cannot say, with `rejected` the MPI's error
// where it rejected the communicator (its error handler has run: the call returns that error
// rather than go on to the MPI, which would run the handler again).
int array_peers(MPI_Comm comm, int& rejected);
// The same for an array only the root reads (Gatherv's receive counts, Scatterv's send counts):
// 0 elsewhere. The root is `root` in an intracommunicator, MPI_ROOT in an intercommunicator.
int root_array_peers(MPI_Comm comm, int root, int& rejected);

}  // namespace strider::calls
