// The few numbers of a datatype object that its pack time depends on: packed bytes, the typical
// dense block, the spacing of blocks and whether blocks step along one stride or more.
// Derived from the canonical form once per type, combined with the count per call.
#pragma once

#include <cstdint>

#include "canon/strided_block.hpp"

namespace strider::model {

// One element of a type.
struct ElementShape {
  std::int64_t size = 0;    // packed bytes
  std::int64_t extent = 0;  // MPI extent (element spacing)
  std::int64_t block = 0;   // dense block length (the mean over a block list)
  std::int64_t stride = 0;  // spacing of consecutive blocks (the mean for a block list)
  int dims = 1;             // 1: one dense block; 2: blocks along one stride; 3: more
  bool irregular = false;   // a block list rather than one strided block
};

// `count` elements.
struct ObjectShape {
  std::int64_t bytes = 0;
  std::int64_t block = 0;
  std::int64_t stride = 0;
  int dims = 1;  // 1: contiguous (nothing to pack)
  bool irregular = false;
  // Spelled out (not defaulted): CUDA sources include this header as C++17.
  friend bool operator==(const ObjectShape& a, const ObjectShape& b) {
    return a.bytes == b.bytes && a.block == b.block && a.stride == b.stride && a.dims == b.dims &&
           a.irregular == b.irregular;
  }
};

ElementShape element_shape(const canon::CanonicalForm& form, std::int64_t extent);
ObjectShape object_shape(const ElementShape& element, std::int64_t count);

}  // namespace strider::model
