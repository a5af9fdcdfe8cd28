// Where packed word p comes from: the index arithmetic of the kernels, also compiled for the
// host so the CPU tests check it against the host engine for every word of random forms.
#pragma once

#include <cstdint>

#include "engine/cuda/launch_plan.hpp"

namespace strider::engine::cuda {

template <class Div>
struct IndexOf;
template <>
struct IndexOf<FastDivmod32> {
  using type = std::uint32_t;
};
template <>
struct IndexOf<Divmod64> {
  using type = std::uint64_t;
};

// Byte offset of word `q` (as block word) of a strided block: q % words_per_block is the word in
// the block, the quotient walks the dims. The last dim needs no division.
template <int W, class Div, int kDims, class Index>
STRIDER_HD std::int64_t strided_offset(std::int64_t offset, const Div& per_block, int ndims,
                                       const Div* count, const std::int64_t* stride, Index q) {
  Index r;
  per_block.divmod(q, q, r);
  std::int64_t at = offset + static_cast<std::int64_t>(r) * W;
  STRIDER_UNROLL
  for (int k = 0; k < kDims; ++k) {
    if (k >= ndims) break;
    if (k == ndims - 1) {
      at += static_cast<std::int64_t>(q) * stride[k];
      break;
    }
    Index rk;
    count[k].divmod(q, q, rk);
    at += static_cast<std::int64_t>(rk) * stride[k];
  }
  return at;
}

// Byte offset of repetition `rep` of a block list (the form's repeat dims, then the count).
template <class Div, class Index>
STRIDER_HD std::int64_t rep_offset(const ListLaunch<Div>& l, Index rep) {
  std::int64_t at = 0;
  STRIDER_UNROLL
  for (int k = 0; k < kMaxLaunchDims; ++k) {
    if (k >= l.nrep) break;
    if (k == l.nrep - 1) {
      at += static_cast<std::int64_t>(rep) * l.rep_stride[k];
      break;
    }
    Index rk;
    l.rep_count[k].divmod(rep, rep, rk);
    at += static_cast<std::int64_t>(rk) * l.rep_stride[k];
  }
  return at;
}

// Byte offset of word `w` of piece `i`.
template <int W, class Div, class Index>
STRIDER_HD std::int64_t piece_offset(const ListLaunch<Div>& l, int i, Index w) {
  const PieceDesc<Div>& piece = l.pieces[i];
  return strided_offset<W, Div, static_cast<int>(canon::kMaxDims)>(
      piece.offset, piece.words_per_block, piece.ndims, piece.count, piece.stride, w);
}

// Byte offset of packed word p of a block list: which repetition, which piece (binary search
// over the pieces' first words, bounded by the chunk index), then within the piece.
template <int W, class Div, class Index>
STRIDER_HD std::int64_t list_offset(const ListLaunch<Div>& l, Index p) {
  Index rep, r;
  l.words_per_rep.divmod(p, rep, r);
  const auto chunk = static_cast<std::size_t>(r >> Policy::kChunkShift);
  int lo = static_cast<int>(l.chunk_first[chunk]), hi = static_cast<int>(l.chunk_first[chunk + 1]);
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (l.first_words[mid] <= r) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return rep_offset(l, rep) + piece_offset<W>(l, lo, static_cast<Index>(r - l.first_words[lo]));
}

}  // namespace strider::engine::cuda
