// MPI-4's large-count collectives (`_c`: MPI_Count counts, MPI_Aint displacements), which mpi4py
// calls wherever the MPI has them, served through the classic paths: where every count and
// displacement fits an int, the call is the classic one. Where one does not, the entry point
// makes the MPI's own `_c` call.
#pragma once

#include <mpi.h>

#include <climits>
#include <initializer_list>
#include <vector>

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
  if (n < 0) return false;
  out.assign(static_cast<std::size_t>(n > 0 ? n : 1), 0);
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

// How many peers an array argument of a collective on `comm` has (the group's size, the remote
// group's on an intercommunicator); -1 where the MPI cannot say.
int array_peers(MPI_Comm comm);
// The same for an array only the root reads (Gatherv's receive counts, Scatterv's send counts):
// 0 elsewhere. The root is `root` in an intracommunicator, MPI_ROOT in an intercommunicator.
int root_array_peers(MPI_Comm comm, int root);

}  // namespace strider::calls
