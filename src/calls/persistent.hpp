// Persistent calls (MPI_Send_init, MPI_Recv_init, ...; MPI-4's MPI_<collective>_init) are not
// served: Strider's operations live under a request from one start to its completion, and a
// persistent request is started many times. Their GPU buffers must not reach an MPI that is not
// CUDA-aware (it would dereference them at MPI_Start), so such calls are refused with a clear
// error, before the MPI creates anything; everything else goes to the MPI unchanged.
#pragma once

#include <mpi.h>

#include <initializer_list>

namespace strider::calls {

// Whether a persistent call on these buffers must be refused: the MPI is not CUDA-aware and one
// of them is device memory. With STRIDER_COLL_HOST=pack every persistent collective is refused
// (host buffers then take the GPU path's logic, so CI sees the refusal). Null, MPI_IN_PLACE and
// MPI_BOTTOM buffers are skipped.
bool refuse_persistent(std::initializer_list<const void*> buffers, bool collective);

// Reports the refusal through `comm`'s error handler: MPI_ERR_BUFFER (a buffer the call cannot
// take here), with the nonblocking form to use instead in the log line.
int persistent_refused(MPI_Comm comm, const char* name, const char* instead);

}  // namespace strider::calls
