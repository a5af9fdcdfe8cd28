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

// One object of a batched pack or unpack (TEMPORARY until the batch kernel lands).
struct BatchItem {
  const canon::CanonicalForm* form = nullptr;
  std::int64_t extent = 0;
  const TypeState* state = nullptr;
  std::int64_t count = 0;
  runtime::BufferView user;
  std::int64_t packed_offset = 0;
};
Outcome pack_batch(const BatchItem* items, std::size_t n, const runtime::BufferView& packed,
                   std::int64_t packed_bytes, const Policy& policy, std::string& error);
Outcome unpack_batch(const runtime::BufferView& packed, std::int64_t packed_bytes,
                     const BatchItem* items, std::size_t n, const Policy& policy, std::string& error);
Outcome copy_layout(const Layout& from, std::int64_t count_from,
                    const runtime::BufferView& from_view, const Layout& to, std::int64_t count_to,
                    const runtime::BufferView& to_view, const Policy& policy, std::string& error);

// Synchronous copy between any two memories; false with `error` on failure.
bool copy(void* dst, const void* src, std::size_t bytes, std::string& error);

// Whether this build has the GPU engine.
bool available();

}  // namespace strider::engine::cuda
