// The staged path for GPU buffers the GPU engine does not serve (a type Strider cannot decode,
// no GPU memory for scratch, STRIDER_GPU_ENGINE=off): the object's span is copied to host
// memory, the system MPI packs or unpacks there, and the results are copied back. Slow, but it
// needs no CUDA-aware MPI and never hands a device pointer to one that is not.
#pragma once

#include <mpi.h>

#include <string>

#include "plan/decode.hpp"
#include "runtime/memory_kind.hpp"

namespace strider::transfer {

using PackFn = int (*)(const void*, int, MPI_Datatype, void*, int, int*, MPI_Comm);
using UnpackFn = int (*)(const void*, int, int*, void*, int, MPI_Datatype, MPI_Comm);

// `bounds` are the type's (the plan's); `packed` is the packed buffer as the application passed
// it and `packed_kind` the memory at the current position.
int staged_pack(PackFn next, const decode::Bounds& bounds, const runtime::BufferView& user,
                int count, MPI_Datatype type, std::byte* packed, runtime::MemoryKind packed_kind,
                int outsize, int* position, MPI_Comm comm);
int staged_unpack(UnpackFn next, const decode::Bounds& bounds, const std::byte* packed,
                  runtime::MemoryKind packed_kind, int insize, int* position,
                  const runtime::BufferView& user, int count, MPI_Datatype type, MPI_Comm comm);

// Reports a failure of Strider's own machinery through the communicator's error handler.
int report_error(MPI_Comm comm, const char* what, const std::string& detail);

}  // namespace strider::transfer
