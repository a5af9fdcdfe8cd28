// The host pack engine: packs and unpacks host memory by walking a canonical form.
// It is the reference the GPU kernels are tested against, and serves host buffers.
#pragma once

#include <cstddef>
#include <cstdint>

#include "canon/strided_block.hpp"

namespace strider::engine::cpu {

// Packs `count` elements laid out by `form`, consecutive elements `extent` bytes apart, from
// `origin` (the address of element 0's origin) into `packed`, which receives count*form.size
// bytes.
void pack(const canon::CanonicalForm& form, std::int64_t extent, std::int64_t count,
          const std::byte* origin, std::byte* packed);

// The inverse: scatters count*form.size bytes from `packed` into the layout at `origin`.
void unpack(const canon::CanonicalForm& form, std::int64_t extent, std::int64_t count,
            const std::byte* packed, std::byte* origin);

}  // namespace strider::engine::cpu
