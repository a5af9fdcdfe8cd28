// The GPU engine's tuning constants, in one place (CUB-style policy). The compile-time ones
// shape the kernels; `max_word` is the one run-time knob (STRIDER_GPU_MAX_WORD, for benchmarks).
// Plain C++: host code that plans launches includes it too.
#pragma once

#include <cstdint>

namespace strider::engine::cuda {

struct Policy {
  // Threads per block of every kernel.
  static constexpr int kThreads = 256;
  // Streaming (large-word) kernels run about one resident wave: this many blocks per SM.
  static constexpr int kBlocksPerSm = 8;
  // Words per thread. Small words are scattered one-sector reads: one word per thread over a
  // grid as large as the object (bench/pack: fastest on H200, on par with or ahead of every
  // looped variant tried: 4, 8 and 16 words per thread). Large words stream: four per thread.
  static constexpr int unroll(int word) { return word <= 4 ? 1 : 4; }
  // Block lists: a thread finds its piece by binary search between two entries of a chunk
  // index over chunks of 2^kChunkShift packed words (CUB-style tiles).
  static constexpr int kChunkShift = 8;
  // Many small pieces go a warp per piece: below this mean piece size (in words) a warp's
  // lanes are mostly busy and the per-word search the other kernel pays costs more than it
  // saves; only for lists of at least kWarpPieceMinPieces pieces.
  static constexpr std::uint64_t kWarpPieceMaxWords = 128;
  static constexpr int kWarpPieceMinPieces = 32;

  // Contiguous objects up to this size are copied by the strided kernel, which signals its own
  // completion; larger ones by one cudaMemcpyAsync, waited on with an event (bench/call_cost on
  // an H100: the kernel won at 1 KiB, the copy engine at 64 KiB and up).
  static constexpr std::int64_t kSignalledCopyMaxBytes = 4096;

  // The largest word (bytes) a thread moves: 16, 8, 4, 2 or 1.
  int max_word = 16;
};

}  // namespace strider::engine::cuda
