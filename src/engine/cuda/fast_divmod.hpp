// Division by a run-time constant without a divide instruction (Granlund & Montgomery): the
// divisor's magic multiplier and shift are computed once on the host and travel in kernel
// parameters. Exact for every 32-bit dividend. The 64-bit variant divides plainly; it serves
// objects of more than 2^31 words.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define STRIDER_HD __host__ __device__ __forceinline__
#define STRIDER_UNROLL _Pragma("unroll")
#else
#define STRIDER_HD inline
#define STRIDER_UNROLL
#endif

namespace strider::engine::cuda {

struct FastDivmod32 {
  std::uint32_t divisor = 1;
  std::uint32_t multiplier = 0;
  std::uint32_t shift = 0;

  FastDivmod32() = default;
  // d must be in [1, 2^32).
  explicit FastDivmod32(std::uint64_t d) : divisor(static_cast<std::uint32_t>(d)) {
    // shift = ceil(log2 d); multiplier = floor(2^32 (2^shift - d) / d) + 1
    while (shift < 32 && (std::uint64_t{1} << shift) < divisor) ++shift;
    multiplier = static_cast<std::uint32_t>(
        ((std::uint64_t{1} << 32) * ((std::uint64_t{1} << shift) - divisor)) / divisor + 1);
  }

  STRIDER_HD std::uint32_t div(std::uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const std::uint32_t t = __umulhi(n, multiplier);
#else
    const auto t = static_cast<std::uint32_t>((std::uint64_t{n} * multiplier) >> 32);
#endif
    return static_cast<std::uint32_t>((std::uint64_t{t} + n) >> shift);
  }
  STRIDER_HD void divmod(std::uint32_t n, std::uint32_t& q, std::uint32_t& r) const {
    q = div(n);
    r = n - q * divisor;
  }
};

struct Divmod64 {
  std::uint64_t divisor = 1;

  Divmod64() = default;
  explicit Divmod64(std::uint64_t d) : divisor(d) {}
  STRIDER_HD void divmod(std::uint64_t n, std::uint64_t& q, std::uint64_t& r) const {
    q = n / divisor;
    r = n - q * divisor;
  }
};

}  // namespace strider::engine::cuda
