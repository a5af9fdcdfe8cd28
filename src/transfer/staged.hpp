// The staged path for GPU buffers the GPU engine does not serve (a type Strider cannot decode,
// no GPU memory for scratch, STRIDER_GPU_ENGINE=off): the object's span is copied to host
// memory, the system MPI packs or unpacks there, and the results are copied back. Slow, but it
// needs no CUDA-aware MPI and never hands a device pointer to one that is not.
#pragma once

#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

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

// Reports a failure of Strider's own machinery through the communicator's error handler, or,
// while this thread holds the handlers (HeldErrorHandlers), logs it and keeps it for the holder.
int report_error(MPI_Comm comm, const char* what, const std::string& detail);

// An error report kept while the handlers were held.
struct HeldError {
  MPI_Comm comm = MPI_COMM_NULL;
  int code = MPI_SUCCESS;
};

// While one lives, report_error on this thread calls no error handler and keeps the report in
// the innermost one instead. A flush of deferred sends holds them (calls/deferred_sends.hpp): a
// handler may send, and must not overtake the sends the flush has still to start; and the
// progress thread's reports reach the application's thread.
class HeldErrorHandlers {
 public:
  HeldErrorHandlers();
  ~HeldErrorHandlers();
  HeldErrorHandlers(const HeldErrorHandlers&) = delete;
  HeldErrorHandlers& operator=(const HeldErrorHandlers&) = delete;
  // The reports kept so far, in the order they were made (the holder keeps none after).
  std::vector<HeldError> take() { return std::move(held_); }

 private:
  friend int report_error(MPI_Comm, const char*, const std::string&);
  std::vector<HeldError> held_;
  HeldErrorHandlers* outer_ = nullptr;
};

// Calls the error handler of each report's communicator, in order.
void call_error_handlers(const std::vector<HeldError>& errors);

}  // namespace strider::transfer
