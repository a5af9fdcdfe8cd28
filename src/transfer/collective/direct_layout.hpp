// A collective's send piece that a same-node reader takes straight from the sender's buffer, in
// the sender's layout (no pack kernel, no wire): what the reader needs to know of it, as a
// fixed-size record the MPI's collective moves as bytes. Only strided layouts fit (one strided
// block, no repeat: the boxes, faces and columns of halos and transposes); others go through the
// sender's wire. Pure: no MPI, no CUDA.
#pragma once

#include <array>
#include <cstdint>

#include "canon/strided_block.hpp"
#include "transfer/wire_ipc.hpp"

namespace strider::transfer::collective {

struct DirectLayout {
  // The element's strided block (canon::StridedBlock, flattened).
  std::int64_t offset = 0;
  std::int64_t block = 0;
  std::int64_t dims = 0;
  std::array<std::int64_t, 2 * canon::kMaxDims> dim{};  // count, stride per dim
  std::int64_t extent = 0;                              // elements lie `extent` bytes apart
  std::int64_t count = 0;
  std::int64_t origin = 0;            // the layout's origin, in bytes from the allocation's base
  std::int64_t allocation_bytes = 0;  // the allocation's size (its mapping's)
  WireHandle allocation;              // its CUDA IPC handle
};

// Which pieces are read in place: those whose dense block has at least this many bytes, or any
// piece when the reader runs on the same GPU. Across GPUs a reader's every access crosses the
// link, and pieces of small blocks waste much of each 32-byte sector there (not measured on two
// GPUs yet: a wire's contiguous reads are kept for them).
struct DirectPolicy {
  static constexpr std::int64_t kMinBlockAcrossGpus = 256;
};

// The byte range [lo, hi) that `count` elements of `element`, `extent` bytes apart, touch, from
// their origin.
struct ByteSpan {
  std::int64_t lo = 0, hi = 0;
};
ByteSpan touched_bytes(const canon::StridedBlock& element, std::int64_t extent, std::int64_t count);

// The layout of `count` elements of `element` (the allocation fields left to the caller).
DirectLayout layout_of(const canon::StridedBlock& element, std::int64_t extent, std::int64_t count);
// The reader's copy of the layout's form (one strided piece), summaries derived.
canon::CanonicalForm direct_form(const DirectLayout& layout);
// Whether a received layout may be followed: well formed, holding `bytes` packed bytes, every
// byte it touches inside the allocation it names.
bool consistent(const DirectLayout& layout, std::int64_t bytes);

}  // namespace strider::transfer::collective
