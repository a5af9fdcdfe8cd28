// The GPU pack engine, synchronous form: MPI_Pack/MPI_Unpack semantics on buffers of any memory
// kind where at least one side is GPU-resident; the data is in place when a call returns. Built
// on the stream-ordered calls of engine/cuda/enqueue.hpp. MPI-free: it sees a canonical form,
// an extent and the engine's own per-type state, never a datatype handle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "canon/strided_block.hpp"
#include "engine/cuda/batch_plan.hpp"
#include "engine/cuda/policy.hpp"
#include "engine/cuda/span.hpp"
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

// One object of a batch: `count` elements of a layout in `user`, its packed bytes at
// `packed_offset` of the batch's packed buffer.
struct BatchItem {
  const canon::CanonicalForm* form = nullptr;
  std::int64_t extent = 0;
  const TypeState* state = nullptr;
  std::int64_t count = 0;
  runtime::BufferView user;
  std::int64_t packed_offset = 0;
};

// Packs every item into `packed` (`packed_bytes` in all; bytes no item covers stay untouched)
// with one kernel launch on the GPU holding the items (their GPU-resident user buffers on one
// device). The packed buffer may be device memory, mapped pinned host memory, or pageable host
// memory (then through scratch and one copy per run of items). Items in host memory are packed
// by the host engine. Waits until done. Fallback, nothing written: a form no kernel takes, an
// item on another GPU, or no memory for scratch or the job table.
Outcome pack_batch(Span<const BatchItem> items, const runtime::BufferView& packed,
                   std::int64_t packed_bytes, const Policy& policy, std::string& error);
// The reverse: every item unpacked from its place in `packed`.
Outcome unpack_batch(const runtime::BufferView& packed, std::int64_t packed_bytes,
                     Span<const BatchItem> items, const Policy& policy, std::string& error);

// Runs `copies` (packs, unpacks or layout-to-layout copies, batch_plan.hpp) on GPU `device`
// with one kernel launch: every base must be device memory its kernels reach (its own, a peer
// GPU's, or another process's mapped into this one). Waits.
Outcome copy_batch(Span<const BatchCopy> copies, int device, const Policy& policy,
                   std::string& error);

// Waits until the work the application queued on GPU `device`'s legacy default stream is done
// (what a kernel on Strider's stream would be ordered after): before other processes read this
// process's memory in place, since their kernels are not ordered after it. Synchronous.
Outcome settle_default_stream(int device, std::string& error);
// Whether that work is all done already, without waiting: before another process writes this
// process's memory in place (a receive buffer; its kernel is not ordered after that work).
// False where it cannot be asked.
bool default_stream_idle(int device);

// Copies `count_from` elements of one layout at `from_view` into `count_to` elements of another
// at `to_view` (equal packed bytes; else Failed), both in GPU memory (the GPU holding `to_view`,
// `from_view` on it or on a peer it can reach), with one kernel and no packed buffer. Waits.
Outcome copy_layout(const Layout& from, std::int64_t count_from,
                    const runtime::BufferView& from_view, const Layout& to, std::int64_t count_to,
                    const runtime::BufferView& to_view, const Policy& policy, std::string& error);

// Synchronous copy between any two memories; false with `error` on failure.
bool copy(void* dst, const void* src, std::size_t bytes, std::string& error);

// Whether this build has the GPU engine.
bool available();

// GPUs this process sees (0 without CUDA, a driver or a GPU); asked once.
int device_count();
// The calling thread's current GPU (-1 without one).
int current_device();
// Makes `device` the calling thread's current GPU (a thread of Strider's own acting for the
// application's). False, the error cleared, where it cannot.
bool set_current_device(int device);
// An identifier of GPU `device` (a hash of its UUID), the same in every process that sees
// that GPU; 0 without one.
std::uint64_t device_fingerprint(int device);

}  // namespace strider::engine::cuda
