#include <algorithm>
#include <type_traits>

#include "engine/cuda/kernels.cuh"
#include "engine/cuda/launch.hpp"

namespace strider::engine::cuda {
namespace {

template <int W, class Div>
cudaError_t strided_w(const StridedShape& s, std::byte* user, std::byte* packed, Direction d,
                      cudaStream_t stream, unsigned grid, const Completion& done) {
  StridedLaunch<Div> l;
  if constexpr (std::is_same_v<Div, FastDivmod32>) {
    l = launch32(s);
  } else {
    l = launch64(s);
  }
  if (d == Direction::Pack) {
    strided_kernel<W, Div, true><<<grid, Policy::kThreads, 0, stream>>>(l, user, packed, done);
  } else {
    strided_kernel<W, Div, false><<<grid, Policy::kThreads, 0, stream>>>(l, user, packed, done);
  }
  return cudaGetLastError();
}

template <int W, class Div>
cudaError_t list_w(const ListShape& s, const void* table, int npieces, std::byte* user,
                   std::byte* packed, Direction d, cudaStream_t stream, unsigned grid,
                   bool warp_per_piece, const Completion& done) {
  const ListLaunch<Div> l = list_launch<Div>(s, static_cast<const std::byte*>(table), npieces);
  const bool pack = d == Direction::Pack;
  if (warp_per_piece) {
    pack ? list_warp_kernel<W, Div, true>
        <<<grid, Policy::kThreads, 0, stream>>>(l, user, packed, done)
         : list_warp_kernel<W, Div, false>
        <<<grid, Policy::kThreads, 0, stream>>>(l, user, packed, done);
  } else {
    pack ? list_kernel<W, Div, true><<<grid, Policy::kThreads, 0, stream>>>(l, user, packed, done)
         : list_kernel<W, Div, false><<<grid, Policy::kThreads, 0, stream>>>(l, user, packed, done);
  }
  return cudaGetLastError();
}

// Calls f(Div{}, std::integral_constant<int, W>{}) for the run-time word size and index width.
template <class F>
cudaError_t dispatch(int word, bool wide, F&& f) {
  const auto by_word = [&](auto div) {
    switch (word) {
      case 16:
        return f(div, std::integral_constant<int, 16>{});
      case 8:
        return f(div, std::integral_constant<int, 8>{});
      case 4:
        return f(div, std::integral_constant<int, 4>{});
      case 2:
        return f(div, std::integral_constant<int, 2>{});
      default:
        return f(div, std::integral_constant<int, 1>{});
    }
  };
  return wide ? by_word(Divmod64{}) : by_word(FastDivmod32{});
}

}  // namespace

cudaError_t launch_strided(const StridedShape& shape, bool wide, std::byte* user, std::byte* packed,
                           Direction direction, cudaStream_t stream, int multiprocessors,
                           const Completion& done) {
  const unsigned grid = grid_for(shape.total_words, shape.word, multiprocessors);
  return dispatch(shape.word, wide, [&](auto div, auto word) {
    return strided_w<decltype(word)::value, decltype(div)>(shape, user, packed, direction, stream,
                                                           grid, done);
  });
}

cudaError_t launch_list(const ListShape& shape, const void* table, int npieces, bool wide,
                        std::byte* user, std::byte* packed, Direction direction,
                        cudaStream_t stream, int multiprocessors, ListKernel kind,
                        const Completion& done) {
  const bool warp_per_piece =
      kind == ListKernel::WarpPerPiece ||
      (kind == ListKernel::Auto && npieces >= Policy::kWarpPieceMinPieces &&
       shape.words_per_rep <= Policy::kWarpPieceMaxWords * static_cast<std::uint64_t>(npieces));
  unsigned grid = grid_for(shape.total_words, shape.word, multiprocessors);
  if (warp_per_piece) {
    const std::uint64_t jobs = shape.total_words / shape.words_per_rep * npieces;
    const std::uint64_t warps_per_block = Policy::kThreads / 32;
    grid = static_cast<unsigned>(std::min<std::uint64_t>(
        std::uint64_t{1} << 30, (jobs + warps_per_block - 1) / warps_per_block));
  }
  return dispatch(shape.word, wide, [&](auto div, auto word) {
    return list_w<decltype(word)::value, decltype(div)>(
        shape, table, npieces, user, packed, direction, stream, grid, warp_per_piece, done);
  });
}

}  // namespace strider::engine::cuda
