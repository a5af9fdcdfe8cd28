// Persistent calls (MPI_Send_init, MPI_Recv_init, ...; MPI-4's MPI_<collective>_init) on the
// buffers Strider moves are served (calls/persistent_requests.hpp). A persistent point-to-point
// call Strider does not serve whose GPU buffer would reach an MPI that is not CUDA-aware (it would
// dereference it at MPI_Start) is refused with a clear error, before the MPI creates anything; so
// is a persistent collective on GPU buffers where the MPI's own is unreliable. Every other
// persistent collective Strider does not serve goes to the MPI, as its nonblocking form does.
#pragma once

#include <mpi.h>

#include <initializer_list>

namespace strider::calls {

// Whether a persistent call Strider does not serve must be refused: the MPI is not CUDA-aware
// and one of its buffers is device memory. Null, MPI_IN_PLACE and MPI_BOTTOM buffers are
// skipped.
bool refuse_persistent(std::initializer_list<const void*> buffers);

// Whether the MPI's own persistent collective `name` (e.g. "MPI_Gather_init", or its `_c` form)
// loses data on wires filled at MPI_Start, so that Strider must not serve it over that MPI.
// MPICH before 4.3: its persistent Gather sends what the send buffer held at init
// (pmodels/mpich#7078), its persistent Scatter fails or hangs at the second start, its persistent
// Allgather on an intercommunicator corrupts data.
bool mpi_persistent_collective_unreliable(const char* name, MPI_Comm comm);

// Reports the refusal through `comm`'s error handler: MPI_ERR_BUFFER (a buffer the call cannot
// take here), with the nonblocking form to use instead in the log line.
int persistent_refused(MPI_Comm comm, const char* name, const char* instead);

}  // namespace strider::calls
