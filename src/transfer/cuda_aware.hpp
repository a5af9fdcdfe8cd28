// Whether the MPI underneath accepts GPU pointers.
#pragma once

namespace strider::transfer {

// STRIDER_MPI_CUDA_AWARE when set; else the MPI's own answer (MPIX_Query_cuda_support, looked
// up at run time since not every MPI has it); else no. Asked once, after MPI_Init.
bool mpi_cuda_aware();

}  // namespace strider::transfer
