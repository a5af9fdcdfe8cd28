// The pack/unpack kernels: one generic grid-stride loop over the packed stream's words,
// specialized by word size (1-16 bytes), index width and direction. Each thread handles
// kUnroll words a grid-stride apart, issuing all loads before the stores, so consecutive
// threads touch consecutive packed words (coalesced on the packed side; many small blocks per
// warp for small blocks, whole vectorized rows for large ones).
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/cuda/launch_plan.hpp"
#include "engine/cuda/word_offset.hpp"

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

constexpr int kThreads = 256;
constexpr int kUnroll = 4;

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

template <int W, class Div, bool kPack>
__global__ void __launch_bounds__(kThreads)
    list_kernel(const ListLaunch<Div> l, std::byte* user, std::byte* packed) {
  using Index = typename IndexOf<Div>::type;
  copy_words<W, Index, kPack>(
      static_cast<Index>(l.total_words), [&](Index p) { return list_offset<W>(l, p); }, user,
      packed);
}

}  // namespace strider::engine::cuda
