// The GPU pack engine, synchronous form: MPI_Pack/MPI_Unpack semantics on buffers of any memory
// kind where at least one side is GPU-resident; the data is in place when a call returns. Built
// on the stream-ordered calls of engine/cuda/enqueue.hpp. MPI-free: it sees a canonical form,
// an extent and the engine's own per-type state, never a datatype handle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "canon/strided_block.hpp"
#include "engine/cuda/policy.hpp"
#include "engine/cuda/type_state.hpp"
#include "runtime/memory_kind.hpp"

namespace strider::engine::cuda {

// A datatype as the engine needs it.
struct Layout {
  const canon::CanonicalForm& form;
  std::int64_t extent = 0;
  const TypeState& state;
};

enum class Outcome {
  Done,      // packed / unpacked
  Fallback,  // not served, nothing written (no CUDA, no scratch memory): use the staged path
  Failed,    // a CUDA error; `error` says which
};

Outcome pack(const Layout& layout, std::int64_t count, const runtime::BufferView& user,
             const runtime::BufferView& packed, const Policy& policy, std::string& error);
Outcome unpack(const Layout& layout, std::int64_t count, const runtime::BufferView& packed,
               const runtime::BufferView& user, const Policy& policy, std::string& error);

// Synchronous copy between any two memories; false with `error` on failure.
bool copy(void* dst, const void* src, std::size_t bytes, std::string& error);

// Whether this build has the GPU engine.
bool available();

}  // namespace strider::engine::cuda
