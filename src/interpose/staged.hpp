// The staged path for GPU buffers the GPU engine does not serve (a type Strider cannot decode,
// no GPU memory for scratch, STRIDER_GPU_ENGINE=off): the object's span is copied to host
// memory, the system MPI packs or unpacks there, and the results are copied back. Slow, but it
// needs no CUDA-aware MPI and never hands a device pointer to one that is not.
#pragma once

#include <mpi.h>

#include <string>

#include "runtime/memory_kind.hpp"

namespace strider::interpose {

using PackFn = int (*)(const void*, int, MPI_Datatype, void*, int, int*, MPI_Comm);
using UnpackFn = int (*)(const void*, int, int*, void*, int, MPI_Datatype, MPI_Comm);

int staged_pack(PackFn next, const runtime::BufferView& user, int count, MPI_Datatype type,
                const runtime::BufferView& packed, int outsize, int* position, MPI_Comm comm);
int staged_unpack(UnpackFn next, const runtime::BufferView& packed, int insize, int* position,
                  const runtime::BufferView& user, int count, MPI_Datatype type, MPI_Comm comm);

// Reports a failure of Strider's own machinery through the communicator's error handler.
int report_error(MPI_Comm comm, const char* what, const std::string& detail);

}  // namespace strider::interpose
