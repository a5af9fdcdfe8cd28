// Host-side description of one GPU pack/unpack launch, computed from a canonical form, the
// element count and the two base addresses. Pure, so it is unit-tested without a GPU; the
// kernels read it by value (no per-type metadata in device memory for strided forms).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "canon/strided_block.hpp"
#include "engine/cuda/fast_divmod.hpp"
#include "engine/cuda/policy.hpp"

namespace strider::engine::cuda {

// Dims a launch iterates, the element count folded in (a shape with more is not launched).
constexpr int kMaxLaunchDims = static_cast<int>(canon::kMaxDims);

// A strided block as the kernels see it: words of `word` bytes, `words_per_block` per dense
// block, then dims (innermost first) with byte strides. Word index p of the packed stream maps
// to offset + (p % words_per_block) * word + sum_k i_k * stride[k].
template <class Div>
struct StridedLaunch {
  std::int64_t offset = 0;
  Div words_per_block;
  int ndims = 0;
  Div count[kMaxLaunchDims];
  std::int64_t stride[kMaxLaunchDims] = {};
  std::uint64_t total_words = 0;
};

// The blocks of one launch over `total_words` words of `word` bytes: a thread per word for small
// words (capped by the grid limit; the grid-stride loop covers any rest), about one resident wave
// for large ones.
unsigned grid_for(std::uint64_t total_words, int word, int multiprocessors);

// The largest of 16/8/4/2/1 bytes dividing every value given (0 divides nothing away).
int word_size_for(std::initializer_list<std::uint64_t> values);

// The shape of a strided pack: the single piece of `form` repeated `count` times `extent` apart,
// with the dims normalized (count x contiguous is one block). `user_origin`/`packed` decide the
// word size together with the block and the strides.
struct StridedShape {
  canon::StridedBlock block;  // normalized, the element count folded in as the outermost dim
  int word = 1;
  std::uint64_t total_words = 0;
};
// std::nullopt when the form is not strided or the count does not fit a dim. The word is at most
// `max_word`, and 1 for blocks of 4 bytes or less.
std::optional<StridedShape> strided_shape(const canon::CanonicalForm& form, std::int64_t extent,
                                          std::int64_t count, std::uintptr_t user_origin,
                                          std::uintptr_t packed, int max_word = 16);

// 32-bit index arithmetic is used when every index and count stays below 2^31.
bool fits_32bit(const StridedShape& shape);

StridedLaunch<FastDivmod32> launch32(const StridedShape& shape);
StridedLaunch<Divmod64> launch64(const StridedShape& shape);

// Block lists (several pieces): the pieces live in device memory, uploaded once per type, device
// and word size; the repetition (the form's repeat dims, then the element count) travels by value.
template <class Div>
struct PieceDesc {
  std::int64_t offset = 0;
  std::uint64_t first_word = 0;  // where the piece starts in one repetition's packed words
  Div words_per_block;
  int ndims = 0;
  Div count[canon::kMaxDims];
  std::int64_t stride[canon::kMaxDims] = {};
};

// A thread finds its piece by binary search between two entries of a chunk index: the piece
// holding the first word of each chunk of 2^Policy::kChunkShift packed words (CUB-style tiles,
// so the search spans the few pieces of one chunk rather than all of them).

template <class Div>
struct ListLaunch {
  const PieceDesc<Div>* pieces = nullptr;  // all three arrays live in one device table
  const std::uint64_t* first_words = nullptr;
  const std::uint32_t* chunk_first = nullptr;
  int npieces = 0;
  Div words_per_rep;
  int nrep = 0;
  Div rep_count[kMaxLaunchDims];
  std::int64_t rep_stride[kMaxLaunchDims] = {};
  std::uint64_t total_words = 0;
};

struct ListShape {
  int word = 1;
  std::uint64_t words_per_rep = 0;
  std::uint64_t total_words = 0;
  canon::DimList rep;  // the form's repeat dims (innermost first), then the element count
};
std::optional<ListShape> list_shape(const canon::CanonicalForm& form, std::int64_t extent,
                                    std::int64_t count, std::uintptr_t user_origin,
                                    std::uintptr_t packed, int max_word = 16);
bool fits_32bit(const canon::CanonicalForm& form, const ListShape& shape);

// The table of a form's pieces for a word size, as bytes: the pieces, their first words and the
// chunk index. Built on the host, uploaded once per type, device and word size by the caller.
template <class Div>
std::vector<std::byte> list_table(const canon::CanonicalForm& form, int word);

// The launch for a table at `table` (device memory for kernels, host memory for tests).
template <class Div>
ListLaunch<Div> list_launch(const ListShape& shape, const std::byte* table, int npieces);

}  // namespace strider::engine::cuda
