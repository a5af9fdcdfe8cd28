// The canonical form's value types: a strided block (CuTe-like shape/stride over a dense block)
// and the ordered list of such pieces that a whole datatype lowers to.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strider::canon {

struct Dim {
  std::int64_t count = 1;
  std::int64_t stride = 0;  // bytes, may be negative or zero
  friend bool operator==(const Dim&, const Dim&) = default;
};

// `block` dense bytes at offset + sum_k i_k * dims[k].stride, packed with dims[0] varying fastest.
// dims are listed innermost first, outermost last.
struct StridedBlock {
  std::int64_t offset = 0;
  std::int64_t block = 0;
  std::vector<Dim> dims;

  std::int64_t blocks() const;  // number of dense blocks
  std::int64_t packed_bytes() const { return block * blocks(); }
  bool empty() const { return packed_bytes() == 0; }
  friend bool operator==(const StridedBlock&, const StridedBlock&) = default;
};

// Rewrites `sb` into its normal form without changing its ordered byte sequence:
// count-1 dims removed, dims whose stride equals the bytes below them folded into the block,
// adjacent dims with outer stride == inner count * inner stride merged; an empty block becomes
// StridedBlock{}.
StridedBlock normalized(StridedBlock sb);

// Appends `next` to `run` if the concatenated byte sequence is again one strided block
// (contiguous dense blocks, or one more step of the outermost stride). Both must be normalized.
bool try_append(StridedBlock& run, const StridedBlock& next);

// A datatype's canonical form: pieces in typemap order. One piece means "strided".
struct CanonicalForm {
  std::vector<StridedBlock> pieces;
  std::int64_t size = 0;  // packed bytes of one element

  bool strided() const { return pieces.size() == 1; }
  friend bool operator==(const CanonicalForm&, const CanonicalForm&) = default;
};

std::string to_string(const StridedBlock& sb);
std::string to_string(const CanonicalForm& form);

}  // namespace strider::canon
