#include "engine/cpu/pack.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace strider::engine::cpu {
namespace {

using canon::Dim;
using canon::StridedBlock;

// Copies of a compile-time size let the compiler emit plain loads and stores for small blocks.
template <std::size_t kBytes>
struct FixedCopy {
  void operator()(std::byte* dst, const std::byte* src) const { std::memcpy(dst, src, kBytes); }
};

struct RuntimeCopy {
  std::size_t bytes;
  void operator()(std::byte* dst, const std::byte* src) const { std::memcpy(dst, src, bytes); }
};

// Visits the blocks of `sb` (origin-relative addresses) in packed order. kPack selects the copy
// direction; `packed` advances by the block size per block.
template <bool kPack, class Copy>
std::byte* walk(const StridedBlock& sb, std::byte* origin, std::byte* packed, Copy copy,
                std::size_t block) {
  std::byte* start = origin + sb.offset;
  if (sb.dims.empty()) {
    kPack ? copy(packed, start) : copy(start, packed);
    return packed + block;
  }
  const Dim inner = sb.dims.front();
  const std::size_t outer_dims = sb.dims.size() - 1;
  // An odometer over the outer dims; the innermost dim is the tight loop.
  std::array<std::int64_t, canon::kMaxDims> index{};
  std::byte* row = start;
  for (;;) {
    std::byte* p = row;
    for (std::int64_t i = 0; i < inner.count; ++i, p += inner.stride, packed += block) {
      kPack ? copy(packed, p) : copy(p, packed);
    }
    std::size_t d = 0;
    for (; d < outer_dims; ++d) {
      const Dim& dim = sb.dims[d + 1];
      if (++index[d] < dim.count) {
        row += dim.stride;
        break;
      }
      row -= (dim.count - 1) * dim.stride;
      index[d] = 0;
    }
    if (d == outer_dims) return packed;
  }
}

template <bool kPack>
std::byte* walk_any(const StridedBlock& sb, std::byte* origin, std::byte* packed) {
  const auto block = static_cast<std::size_t>(sb.block);
  switch (block) {
    case 1:
      return walk<kPack>(sb, origin, packed, FixedCopy<1>{}, block);
    case 2:
      return walk<kPack>(sb, origin, packed, FixedCopy<2>{}, block);
    case 4:
      return walk<kPack>(sb, origin, packed, FixedCopy<4>{}, block);
    case 8:
      return walk<kPack>(sb, origin, packed, FixedCopy<8>{}, block);
    case 12:
      return walk<kPack>(sb, origin, packed, FixedCopy<12>{}, block);
    case 16:
      return walk<kPack>(sb, origin, packed, FixedCopy<16>{}, block);
    case 24:
      return walk<kPack>(sb, origin, packed, FixedCopy<24>{}, block);
    case 32:
      return walk<kPack>(sb, origin, packed, FixedCopy<32>{}, block);
    case 64:
      return walk<kPack>(sb, origin, packed, FixedCopy<64>{}, block);
    default:
      return walk<kPack>(sb, origin, packed, RuntimeCopy{block}, block);
  }
}

template <bool kPack>
void run(const canon::CanonicalForm& form, std::int64_t extent, std::int64_t count,
         std::byte* origin, std::byte* packed) {
  if (count <= 0 || form.size == 0) return;
  if (form.strided()) {
    const StridedBlock& piece = form.pieces.front();
    if (count == 1) {
      walk_any<kPack>(piece, origin, packed);
      return;
    }
    if (piece.dims.size() < canon::kMaxDims) {
      // The element count becomes the outermost dim, so e.g. count x contiguous is one memcpy.
      StridedBlock sb = piece;
      sb.dims.push_back(Dim{count, extent});
      walk_any<kPack>(canon::normalized(sb), origin, packed);
      return;
    }
  }
  // Elements, then the form's repetitions (an odometer, innermost first), then the pieces.
  const std::size_t nrep = form.repeat.size();
  std::array<std::int64_t, canon::kMaxDims> index{};
  for (std::int64_t e = 0; e < count; ++e) {
    std::byte* at = origin + e * extent;
    for (;;) {
      for (const StridedBlock& sb : form.pieces) packed = walk_any<kPack>(sb, at, packed);
      std::size_t d = 0;
      for (; d < nrep; ++d) {
        const Dim& dim = form.repeat[d];
        if (++index[d] < dim.count) {
          at += dim.stride;
          break;
        }
        at -= (dim.count - 1) * dim.stride;
        index[d] = 0;
      }
      if (d == nrep) break;
    }
  }
}

}  // namespace

void pack(const canon::CanonicalForm& form, std::int64_t extent, std::int64_t count,
          const std::byte* origin, std::byte* packed) {
  // The walk is shared by both directions; pack only reads through `origin`.
  run<true>(form, extent, count, const_cast<std::byte*>(origin), packed);
}

void unpack(const canon::CanonicalForm& form, std::int64_t extent, std::int64_t count,
            const std::byte* packed, std::byte* origin) {
  run<false>(form, extent, count, origin, const_cast<std::byte*>(packed));
}

}  // namespace strider::engine::cpu
