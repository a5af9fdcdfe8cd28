// The pack/unpack kernels: one generic grid-stride loop over the packed stream's words,
// specialized by word size (1-16 bytes), index width and direction. Each thread handles
// kUnroll words a grid-stride apart, issuing all loads before the stores, so consecutive
// threads touch consecutive packed words (coalesced on the packed side; many small blocks per
// warp for small blocks, whole vectorized rows for large ones).
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/cuda/launch_plan.hpp"

namespace strider::engine::cuda {

template <int W>
struct WordOf;
template <>
struct WordOf<1> {
  using type = std::uint8_t;
};
template <>
struct WordOf<2> {
  using type = std::uint16_t;
};
template <>
struct WordOf<4> {
  using type = std::uint32_t;
};
template <>
struct WordOf<8> {
  using type = unsigned long long;
};
template <>
struct WordOf<16> {
  using type = uint4;
};

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

constexpr int kThreads = 256;
constexpr int kUnroll = 4;

// Byte offset of word `q` (as block word) of a strided block: q % words_per_block is the word in
// the block, the quotient walks the dims. The last dim needs no division.
template <int W, class Div, int kDims, class Index>
__device__ __forceinline__ std::int64_t strided_offset(std::int64_t offset, const Div& per_block,
                                                       int ndims, const Div* count,
                                                       const std::int64_t* stride, Index q) {
  Index r;
  per_block.divmod(q, q, r);
  std::int64_t at = offset + static_cast<std::int64_t>(r) * W;
#pragma unroll
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

// The grid-stride loop shared by all kernels; `offset_of(p)` maps packed word p to its byte
// offset from the user buffer's origin.
template <int W, class Index, bool kPack, class OffsetOf>
__device__ __forceinline__ void copy_words(Index total, OffsetOf offset_of, std::byte* user,
                                           std::byte* packed) {
  using Word = typename WordOf<W>::type;
  const Index step = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index p0 = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; p0 < total;
       p0 += step * kUnroll) {
    std::int64_t at[kUnroll];
    Word v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const Index p = p0 + u * step;
      if (p < total) at[u] = offset_of(p);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const Index p = p0 + u * step;
      if (p < total) {
        v[u] = kPack ? *reinterpret_cast<const Word*>(user + at[u])
                     : reinterpret_cast<const Word*>(packed)[p];
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const Index p = p0 + u * step;
      if (p < total) {
        if (kPack) {
          reinterpret_cast<Word*>(packed)[p] = v[u];
        } else {
          *reinterpret_cast<Word*>(user + at[u]) = v[u];
        }
      }
    }
  }
}

template <int W, class Div, bool kPack>
__global__ void __launch_bounds__(kThreads)
    strided_kernel(const StridedLaunch<Div> l, std::byte* user, std::byte* packed) {
  using Index = typename IndexOf<Div>::type;
  copy_words<W, Index, kPack>(
      static_cast<Index>(l.total_words),
      [&](Index p) {
        return strided_offset<W, Div, kMaxLaunchDims>(l.offset, l.words_per_block, l.ndims,
                                                       l.count, l.stride, p);
      },
      user, packed);
}

// Byte offset of packed word p of a block list: which repetition (the repeat dims and element
// count), which piece (binary search over the pieces' first words), then within the piece.
template <int W, class Div, class Index>
__device__ __forceinline__ std::int64_t list_offset(const ListLaunch<Div>& l, Index p) {
  Index rep, r;
  l.words_per_rep.divmod(p, rep, r);
  std::int64_t at = 0;
#pragma unroll
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
  int lo = 0, hi = l.npieces - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (l.pieces[mid].first_word <= r) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  const PieceDesc<Div>& piece = l.pieces[lo];
  return at + strided_offset<W, Div, static_cast<int>(canon::kMaxDims)>(
                  piece.offset, piece.words_per_block, piece.ndims, piece.count, piece.stride,
                  static_cast<Index>(r - piece.first_word));
}

template <int W, class Div, bool kPack>
__global__ void __launch_bounds__(kThreads)
    list_kernel(const ListLaunch<Div> l, std::byte* user, std::byte* packed) {
  using Index = typename IndexOf<Div>::type;
  copy_words<W, Index, kPack>(
      static_cast<Index>(l.total_words), [&](Index p) { return list_offset<W>(l, p); }, user,
      packed);
}

}  // namespace strider::engine::cuda
