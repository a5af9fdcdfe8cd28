// Host-side plan of a batch: many copies, each of its own canonical forms and word size, moved by
// one kernel launch (a collective packs every peer's piece at once). A copy moves `words` words
// of W bytes from a source address map to a destination one; a map is contiguous, strided or a
// block list. Pack is layout -> contiguous, unpack the reverse, a self copy layout -> layout.
// Pure C++ (the job table is built and checked on the host); the kernel reads the table bytes
// from device memory, as a halo's 208 jobs are too many for kernel parameters.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "canon/strided_block.hpp"
#include "engine/cuda/launch_plan.hpp"
#include "engine/cuda/span.hpp"
#include "engine/cuda/type_state.hpp"

namespace strider::engine::cuda {

// One side of a copy: `count` elements of a layout (form, extent; state holds a block list's
// device tables) with its origin at `base`, or, with no form, `count` contiguous bytes at `base`.
struct BatchSide {
  const canon::CanonicalForm* form = nullptr;
  std::int64_t extent = 0;
  const TypeState* state = nullptr;
  std::int64_t count = 0;
  std::byte* base = nullptr;
};
// Both sides hold the same packed bytes.
struct BatchCopy {
  BatchSide from, to;
};

enum class MapKind : std::int32_t { Contiguous = 0, Strided = 1, List = 2 };

// A side as a job sees it. `table`: a block list's list_table<Div>(*form, word) where the kernel
// reads it; shape_batch leaves it null, the caller fills it in.
struct SideShape {
  MapKind kind = MapKind::Contiguous;
  std::byte* base = nullptr;  // contiguous: the first byte; strided and list: the origin
  StridedShape strided;       // kind Strided
  ListShape list;             // kind List
  const canon::CanonicalForm* form = nullptr;
  const TypeState* state = nullptr;
  const std::byte* table = nullptr;
};
struct CopyShape {
  SideShape from, to;
  int word = 1;  // the largest word both sides allow
  std::uint64_t words = 0;
};
struct BatchShape {
  std::vector<CopyShape> copies;  // the non-empty copies, in order
  bool wide = false;              // 64-bit index arithmetic (some copy needs it)
};

enum class BatchStatus {
  Ok,
  NotSupported,  // a form no kernel takes (more dims than a launch holds)
  SizeMismatch,  // a copy whose sides hold different packed bytes
};

// The shapes of `copies` (empty ones skipped); words at most `max_word` bytes. `force_wide`
// takes 64-bit indexing even where 32 bits suffice (tests).
BatchStatus shape_batch(Span<const BatchCopy> copies, int max_word, BatchShape& out,
                        bool force_wide = false);

// The job table: jobs, then each job's two map records (a head, then the strided or list launch
// for those kinds). A job's blocks are [first_block, first_block + blocks); each block copies
// the words of its job's virtual grid.
struct BatchJob {
  std::uint64_t words = 0;
  std::uint32_t first_block = 0;
  std::uint32_t blocks = 0;
  std::int32_t word = 1;
  std::uint32_t from = 0;  // byte offsets of the map records in the table
  std::uint32_t to = 0;
  std::uint32_t pad = 0;
};
struct MapHead {
  MapKind kind = MapKind::Contiguous;
  std::int32_t pad = 0;
  std::byte* base = nullptr;
};

// Bytes of a map record of each kind (multiples of 8, so records stay aligned).
template <class Div>
constexpr std::size_t map_record_bytes(MapKind kind) {
  const std::size_t launch = kind == MapKind::Strided ? sizeof(StridedLaunch<Div>)
                             : kind == MapKind::List  ? sizeof(ListLaunch<Div>)
                                                      : 0;
  return (sizeof(MapHead) + launch + 7) / 8 * 8;
}
template <class Div>
constexpr std::size_t kMaxMapRecordBytes = std::max(map_record_bytes<Div>(MapKind::Strided),
                                                    map_record_bytes<Div>(MapKind::List));

// The table bytes of a shape exactly, and a bound for any batch of `copies` copies.
std::size_t batch_table_bytes(const BatchShape& shape);
std::size_t batch_table_bound(std::size_t copies);

struct BatchPlan {
  std::size_t bytes = 0;  // of the table written
  int jobs = 0;
  unsigned grid = 0;  // blocks of Policy::kThreads threads; 0: nothing to launch
  bool wide = false;
};
// Writes the job table into `out` (at least batch_table_bytes(shape); else nothing is written and
// the plan is empty). Each job gets blocks in proportion to its words, as a single launch of it
// would (one wave at most for streaming words), at least one; the total is capped at the grid
// limit.
BatchPlan plan_batch(const BatchShape& shape, int multiprocessors, Span<std::byte> out);

// Runs the plan on the host exactly as the kernel's blocks and threads would, word by word
// through the same address maps (the maps' bases and tables must be host memory). Returns the
// words moved. For tests.
std::uint64_t emulate_batch(const BatchPlan& plan, const std::byte* table);

}  // namespace strider::engine::cuda
