// The GPU pack engine: MPI_Pack/MPI_Unpack semantics on buffers of any memory kind, where at
// least one side is GPU-resident. Synchronous: the data is in place when a call returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "plan/plan.hpp"
#include "runtime/memory_kind.hpp"

namespace strider::engine::cuda {

enum class Outcome {
  Done,      // packed / unpacked
  Fallback,  // not served, nothing written (no CUDA, no scratch memory): use the staged path
  Failed,    // a CUDA error; `error` says which
};

Outcome pack(const plan::Plan& plan, std::int64_t count, const runtime::BufferView& user,
             const runtime::BufferView& packed, std::string& error);
Outcome unpack(const plan::Plan& plan, std::int64_t count, const runtime::BufferView& packed,
               const runtime::BufferView& user, std::string& error);

// Synchronous copy between any two memories; false with `error` on failure.
bool copy(void* dst, const void* src, std::size_t bytes, std::string& error);

// Whether this build has the GPU engine.
bool available();

}  // namespace strider::engine::cuda
