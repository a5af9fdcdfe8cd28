// The canonical form's value types: a strided block (CuTe-like shape/stride over a dense block)
// and the ordered list of such pieces that a whole datatype lowers to.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace strider::canon {

// |v| as an unsigned value: strides and offsets may be negative, their magnitude decides
// alignment.
inline std::uint64_t magnitude(std::int64_t v) {
  return v < 0 ? ~static_cast<std::uint64_t>(v) + 1 : static_cast<std::uint64_t>(v);
}

struct Dim {
  std::int64_t count = 1;
  std::int64_t stride = 0;  // bytes, may be negative or zero
  // Spelled out (not defaulted) because CUDA sources include this header as C++17.
  friend bool operator==(const Dim& a, const Dim& b) {
    return a.count == b.count && a.stride == b.stride;
  }
};

// Up to kMaxDims dims stored inline: strided blocks are copied and rebuilt in hot loops (lowering,
// plans per call), where a heap allocation per block would dominate. A type that needs more
// irreducible dims than this is left to the MPI.
constexpr std::size_t kMaxDims = 8;

class DimList {
 public:
  DimList() = default;
  DimList(std::initializer_list<Dim> dims) {
    for (const Dim& d : dims) push_back(d);
  }
  void push_back(Dim d) {
    if (size_ == kMaxDims) throw std::length_error("more than kMaxDims strided dims");
    dims_[size_++] = d;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Dim& operator[](std::size_t i) { return dims_[i]; }
  const Dim& operator[](std::size_t i) const { return dims_[i]; }
  Dim& front() { return dims_[0]; }
  const Dim& front() const { return dims_[0]; }
  Dim& back() { return dims_[size_ - 1]; }
  const Dim& back() const { return dims_[size_ - 1]; }
  const Dim* begin() const { return dims_.data(); }
  const Dim* end() const { return dims_.data() + size_; }
  friend bool operator==(const DimList& a, const DimList& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  std::array<Dim, kMaxDims> dims_{};
  std::size_t size_ = 0;
};

// `block` dense bytes at offset + sum_k i_k * dims[k].stride, packed with dims[0] varying fastest.
// dims are listed innermost first, outermost last.
struct StridedBlock {
  std::int64_t offset = 0;
  std::int64_t block = 0;
  DimList dims;

  std::int64_t blocks() const;  // number of dense blocks
  std::int64_t packed_bytes() const { return block * blocks(); }
  bool empty() const { return packed_bytes() == 0; }
  friend bool operator==(const StridedBlock& a, const StridedBlock& b) {
    return a.offset == b.offset && a.block == b.block && a.dims == b.dims;
  }
};

// Rewrites `sb` into its normal form without changing its ordered byte sequence:
// count-1 dims removed, dims whose stride equals the bytes below them folded into the block,
// adjacent dims with outer stride == inner count * inner stride merged; an empty block becomes
// StridedBlock{}.
StridedBlock normalized(StridedBlock sb);

// Appends `next` to `run` if the concatenated byte sequence is again one strided block
// (contiguous dense blocks, or one more step of the outermost stride). Both must be normalized.
bool try_append(StridedBlock& run, const StridedBlock& next);

// A datatype's canonical form: the pieces in typemap order, the whole sequence repeated over
// `repeat` (innermost first; offset + sum_k i_k * repeat[k].stride), e.g. a vector of structs is
// the struct's pieces repeated. One piece and no repeat means "strided".
struct CanonicalForm {
  std::vector<StridedBlock> pieces;
  DimList repeat;
  std::int64_t size = 0;  // packed bytes of one element
  // Summaries of the pieces, derived by lower() so per-call code need not walk them: the OR of
  // every piece's offset, block and stride magnitudes (for alignment), and the largest count of
  // any piece dim.
  std::uint64_t layout_bits = 0;
  std::int64_t max_piece_count = 0;

  bool strided() const { return pieces.size() == 1 && repeat.empty(); }
  std::int64_t repetitions() const;
  friend bool operator==(const CanonicalForm& a, const CanonicalForm& b) {
    return a.pieces == b.pieces && a.repeat == b.repeat && a.size == b.size;
  }
};

// Derives a form's size, layout_bits and max_piece_count from its pieces and repeat (what
// lowering fills in; a form rebuilt from its pieces elsewhere gets them here).
void derive_summaries(CanonicalForm& form);

std::string to_string(const StridedBlock& sb);
std::string to_string(const CanonicalForm& form);

}  // namespace strider::canon
