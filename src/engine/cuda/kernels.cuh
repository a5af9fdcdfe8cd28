// The pack/unpack kernels: one generic grid-stride loop over the packed stream's words,
// specialized by word size (1-16 bytes), index width and direction. Each thread handles
// several words a grid-stride apart, so consecutive threads touch consecutive packed words
// (coalesced on the packed side; many small blocks per warp for small blocks, whole vectorized
// rows for large ones).
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/cuda/launch.hpp"
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

// The end of every kernel: signals `done` (see Completion) once all blocks have finished.
// Every thread reaches it (the kernels have no early exits).
// The barrier orders the block's writes before thread 0's system fence, which is cumulative, so
// one fence per block covers them (the pattern of CUTLASS's semaphore); a fence in every thread
// cost microseconds on 64 KiB of one-byte words.
__device__ __forceinline__ void signal_done(const Completion& done) {
  if (done.flag == nullptr) return;
  __syncthreads();
  if (threadIdx.x != 0) return;
  __threadfence_system();
  if (atomicAdd(done.blocks, 1u) != gridDim.x - 1) return;
  *done.blocks = 0;
  __threadfence_system();
  *reinterpret_cast<volatile unsigned*>(done.flag) = done.seq;
}

// The grid-stride loop shared by all kernels: moves words first, first + step, ... below `total`
// from address src(p) to address dst(p). Each round issues all its loads before the first store
// (pack: the scattered loads; unpack: the contiguous packed words, then the scattered stores).
template <int W, class Index, class Src, class Dst>
__device__ __forceinline__ void copy_words(Index first, Index step, Index total, Src src, Dst dst) {
  using Word = typename WordOf<W>::type;
  constexpr int kUnroll = Policy::unroll(W);
  for (Index p0 = first; p0 < total; p0 += step * kUnroll) {
    Word v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const Index p = p0 + u * step;
      if (p < total) v[u] = *reinterpret_cast<const Word*>(src(p));
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const Index p = p0 + u * step;
      if (p < total) *reinterpret_cast<Word*>(dst(p)) = v[u];
    }
  }
}

// A pack or unpack over the whole grid: `offset_of(p)` maps packed word p to its byte offset from
// the user buffer's origin.
template <int W, class Index, bool kPack, class OffsetOf>
__device__ __forceinline__ void copy_grid(Index total, OffsetOf offset_of, std::byte* user,
                                          std::byte* packed) {
  const Index first = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  const Index step = static_cast<Index>(gridDim.x) * blockDim.x;
  const auto at_user = [&](Index p) { return user + offset_of(p); };
  const auto at_packed = [&](Index p) { return packed + static_cast<std::int64_t>(p) * W; };
  if constexpr (kPack) {
    copy_words<W>(first, step, total, at_user, at_packed);
  } else {
    copy_words<W>(first, step, total, at_packed, at_user);
  }
}

template <int W, class Div, bool kPack>
__global__ void __launch_bounds__(Policy::kThreads)
    strided_kernel(const StridedLaunch<Div> l, std::byte* user, std::byte* packed,
                   const Completion done) {
  using Index = typename IndexOf<Div>::type;
  copy_grid<W, Index, kPack>(
      static_cast<Index>(l.total_words),
      [&](Index p) {
        return strided_offset<W, Div, kMaxLaunchDims>(l.offset, l.words_per_block, l.ndims, l.count,
                                                      l.stride, p);
      },
      user, packed);
  signal_done(done);
}

template <int W, class Div, bool kPack>
__global__ void __launch_bounds__(Policy::kThreads)
    list_kernel(const ListLaunch<Div> l, std::byte* user, std::byte* packed,
                const Completion done) {
  using Index = typename IndexOf<Div>::type;
  copy_grid<W, Index, kPack>(
      static_cast<Index>(l.total_words), [&](Index p) { return list_offset<W>(l, p); }, user,
      packed);
  signal_done(done);
}

// Block lists of many small pieces: a warp per piece of each repetition, its lanes over the
// piece's words (CUB's "warp per buffer" size class), so no thread searches for its piece.
template <int W, class Div, bool kPack>
__global__ void __launch_bounds__(Policy::kThreads)
    list_warp_kernel(const ListLaunch<Div> l, std::byte* user, std::byte* packed,
                     const Completion done) {
  using Index = typename IndexOf<Div>::type;
  using Word = typename WordOf<W>::type;
  constexpr int kWarp = 32;
  const std::uint64_t per_rep = l.words_per_rep.divisor;
  const std::uint64_t jobs = l.total_words / per_rep * static_cast<std::uint64_t>(l.npieces);
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * blockDim.x / kWarp;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  Word* packed_words = reinterpret_cast<Word*>(packed);
  for (std::uint64_t job =
           (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
       job < jobs; job += warps) {
    const std::uint64_t rep = job / static_cast<std::uint64_t>(l.npieces);
    const int i = static_cast<int>(job - rep * static_cast<std::uint64_t>(l.npieces));
    const std::int64_t base = rep_offset(l, static_cast<Index>(rep));
    const std::uint64_t first = rep * per_rep + l.first_words[i];
    const std::uint64_t words =
        (i + 1 < l.npieces ? l.first_words[i + 1] : per_rep) - l.first_words[i];
    for (std::uint64_t w = static_cast<std::uint64_t>(lane); w < words; w += kWarp) {
      Word* at =
          reinterpret_cast<Word*>(user + base + piece_offset<W>(l, i, static_cast<Index>(w)));
      if (kPack) {
        packed_words[first + w] = *at;
      } else {
        *at = packed_words[first + w];
      }
    }
  }
  signal_done(done);
}

}  // namespace strider::engine::cuda
