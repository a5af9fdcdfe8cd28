// An object in another process's GPU memory, described so that a process of the same node can
// map it and copy to or from it in its owner's layout (no pack kernel, no wire): a same-node
// collective's send piece that its reader takes in place, or a point-to-point receive buffer
// that its sender writes in place (docs/same-node-p2p.md). A fixed-size record, moved as bytes
// by the MPI's collective or published on the offers' board. The object is cut into segments,
// strided blocks in packed order each inside one cudaMalloc allocation (a halo's slot over
// several arrays: one segment per array); objects of more segments or allocations go through a
// wire. Pure: no MPI, no CUDA.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "canon/strided_block.hpp"
#include "ipc/wire_ipc.hpp"

namespace strider::ipc {

struct DirectPolicy {
  static constexpr std::size_t kMaxSegments = 8;     // strided blocks per piece
  static constexpr std::size_t kMaxAllocations = 8;  // allocations they lie in
  // Which objects are copied in place: those whose dense blocks all have at least this many
  // bytes, or any object when both processes run on the same GPU. Across GPUs every access of
  // the copying kernel crosses the link, and small blocks waste much of each 32-byte sector
  // there; yet on two H100s over NVLink (2026-11-26, bench/results/2026-11-26-h100x2-correctness)
  // a ping-pong's write in place beat the landing buffer from 4-byte blocks up (1 MiB of 4-byte
  // blocks 52 against 60 us, of 64-byte blocks 26 against 31 us; 1 KiB 22 against 25-27 us),
  // tied at 2 bytes (83 against 82 us), and the halo's Neighbor_alltoallw read in place moved
  // within 5% either way. STRIDER_DIRECT_MIN_BLOCK overrides it (min_block_across_gpus()).
  static constexpr std::int64_t kMinBlockAcrossGpus = 4;
  // A point-to-point write in place is one kernel that gathers the sender's blocks and scatters
  // them into the receiver's layout. With blocks under kTinyBlock bytes it lost to a pack and an
  // unpack (two kernels, one side scattered in each) past about half a million blocks: 1 MiB of
  // 1-byte blocks 269 against 134 us per half round trip, 4 MiB of 4-byte blocks 283 against
  // 153 us; below that it won (1 MiB of 2- and 4-byte blocks 75 against 81 us, 48 against 58 us).
  // H100 shared by two ranks under MPS, 2026-11-25 (bench/results/2026-11-25-h100-mps-in-place).
  // Such messages go through the landing buffer.
  static constexpr std::int64_t kTinyBlock = 8;
  static constexpr std::int64_t kMaxTinyBlocksInPlace = std::int64_t{1} << 19;
};

// DirectPolicy::kMinBlockAcrossGpus, or STRIDER_DIRECT_MIN_BLOCK where it is set.
std::int64_t min_block_across_gpus();

struct Segment {
  std::int64_t offset = 0;  // of the strided block's origin from its allocation's base
  std::int64_t block = 0;
  std::int64_t dims = 0;
  std::array<std::int64_t, 2 * canon::kMaxDims> dim{};  // count, stride per dim
  std::int64_t allocation = 0;                          // its index in DirectLayout::allocation
};

struct SharedAllocation {
  WireHandle handle;  // CUDA IPC handle of the whole allocation
  std::int64_t bytes = 0;
};

struct DirectLayout {
  std::int64_t segments = 0;
  std::array<Segment, DirectPolicy::kMaxSegments> segment{};
  std::int64_t allocations = 0;
  std::array<SharedAllocation, DirectPolicy::kMaxAllocations> allocation{};
};

// The byte range [lo, hi) that `count` elements of `element`, `extent` bytes apart, touch, from
// their origin.
struct ByteSpan {
  std::int64_t lo = 0, hi = 0;
};
ByteSpan touched_bytes(const canon::StridedBlock& element, std::int64_t extent, std::int64_t count);

// `count` elements of `form`, `extent` bytes apart, as strided blocks in packed order (offsets
// from the origin): one block where the form has one piece (the repetitions and elements as its
// outer dims, up to kMaxDims dims), else each element's repetitions and pieces in turn. Empty
// when that takes more than `max` blocks.
std::vector<canon::StridedBlock> flatten(const canon::CanonicalForm& form, std::int64_t extent,
                                         std::int64_t count, std::size_t max);
// `sb` cut along its outermost dim: one block per index of it, in packed order (`sb` itself
// when it has no dim).
std::vector<canon::StridedBlock> split_outermost(const canon::StridedBlock& sb);

Segment segment_of(const canon::StridedBlock& sb, std::int64_t allocation);
canon::StridedBlock block_of(const Segment& segment);

// Whether a received layout may be followed: well formed, holding `bytes` packed bytes, every
// segment inside the allocation it names.
bool consistent(const DirectLayout& layout, std::int64_t bytes);

// The smallest dense block of a layout's segments / of `count` elements of `form` (a one-piece
// form folded as flatten does, so dense elements count as one block), against DirectPolicy.
std::int64_t smallest_block(const DirectLayout& layout);
std::int64_t smallest_block(const canon::CanonicalForm& form, std::int64_t extent,
                            std::int64_t count);
// Whether every such block has at least `bytes` bytes; stops at the first that has not (a form
// of many pieces is asked at every call).
bool blocks_at_least(const canon::CanonicalForm& form, std::int64_t extent, std::int64_t count,
                     std::int64_t bytes);
// Whether flatten(form, extent, count, max) gives any block, without listing them: asked
// first, so that a form of many pieces (an irregular indexed type) costs nothing per call.
bool flattens_within(const canon::CanonicalForm& form, std::int64_t extent, std::int64_t count,
                     std::size_t max);

// The mapping process's form of the object, `bases[a]` its mapping of allocation a: one element
// whose origin is bases[0] (segments of other allocations lie at their mappings' distance from
// it), summaries derived.
canon::CanonicalForm mapped_form(const DirectLayout& layout, const std::byte* const* bases);

}  // namespace strider::ipc
