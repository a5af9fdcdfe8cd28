#include "engine/cuda/launch_plan.hpp"

namespace strider::engine::cuda {

int word_size_for(std::initializer_list<std::uint64_t> values) {
  int word = 16;
  for (std::uint64_t v : values) {
    while (word > 1 && v % static_cast<std::uint64_t>(word) != 0) word /= 2;
  }
  return word;
}

std::optional<StridedShape> strided_shape(const canon::CanonicalForm& form, std::int64_t extent,
                                          std::int64_t count, std::uintptr_t user_origin,
                                          std::uintptr_t packed) {
  if (!form.strided() || count <= 0) return std::nullopt;
  StridedShape shape;
  shape.block = form.pieces.front();
  if (count > 1) {
    if (shape.block.dims.size() == canon::kMaxDims) return std::nullopt;
    shape.block.dims.push_back(canon::Dim{count, extent});
  }
  shape.block = canon::normalized(shape.block);
  if (shape.block.empty()) return std::nullopt;
  // Strides may be negative: their magnitude decides alignment.
  std::uint64_t align = static_cast<std::uint64_t>(shape.block.block) |
                        static_cast<std::uint64_t>(user_origin + shape.block.offset) |
                        static_cast<std::uint64_t>(packed);
  for (const canon::Dim& d : shape.block.dims) {
    align |= static_cast<std::uint64_t>(d.stride < 0 ? -d.stride : d.stride);
  }
  shape.word = word_size_for({align});
  shape.total_words = static_cast<std::uint64_t>(shape.block.packed_bytes() / shape.word);
  return shape;
}

bool fits_32bit(const StridedShape& shape) {
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 31;
  if (shape.total_words >= kLimit) return false;
  for (const canon::Dim& d : shape.block.dims) {
    if (static_cast<std::uint64_t>(d.count) >= kLimit) return false;
  }
  return true;
}

namespace {

template <class Div>
StridedLaunch<Div> make_launch(const StridedShape& shape) {
  StridedLaunch<Div> l;
  l.offset = shape.block.offset;
  l.words_per_block = Div(static_cast<std::uint64_t>(shape.block.block / shape.word));
  l.ndims = static_cast<int>(shape.block.dims.size());
  for (int k = 0; k < l.ndims; ++k) {
    l.count[k] = Div(static_cast<std::uint64_t>(shape.block.dims[k].count));
    l.stride[k] = shape.block.dims[k].stride;
  }
  l.total_words = shape.total_words;
  return l;
}

}  // namespace

StridedLaunch<FastDivmod32> launch32(const StridedShape& shape) {
  return make_launch<FastDivmod32>(shape);
}

StridedLaunch<Divmod64> launch64(const StridedShape& shape) { return make_launch<Divmod64>(shape); }

namespace {

std::uint64_t magnitude(std::int64_t v) { return static_cast<std::uint64_t>(v < 0 ? -v : v); }

}  // namespace

std::optional<ListShape> list_shape(const canon::CanonicalForm& form, std::int64_t extent,
                                    std::int64_t count, std::uintptr_t user_origin,
                                    std::uintptr_t packed) {
  if (form.pieces.empty() || count <= 0) return std::nullopt;
  ListShape shape;
  std::uint64_t align =
      static_cast<std::uint64_t>(user_origin) | static_cast<std::uint64_t>(packed);
  std::uint64_t piece_bytes = 0;
  for (const canon::StridedBlock& sb : form.pieces) {
    align |= magnitude(sb.offset) | static_cast<std::uint64_t>(sb.block);
    for (const canon::Dim& d : sb.dims) align |= magnitude(d.stride);
    piece_bytes += static_cast<std::uint64_t>(sb.packed_bytes());
  }
  shape.rep = form.repeat;
  for (const canon::Dim& d : form.repeat) align |= magnitude(d.stride);
  if (count > 1) {
    if (shape.rep.size() == canon::kMaxDims) return std::nullopt;
    shape.rep.push_back(canon::Dim{count, extent});
    align |= magnitude(extent);
  }
  shape.word = word_size_for({align});
  shape.words_per_rep = piece_bytes / static_cast<std::uint64_t>(shape.word);
  shape.total_words = static_cast<std::uint64_t>(form.size) * static_cast<std::uint64_t>(count) /
                      static_cast<std::uint64_t>(shape.word);
  return shape;
}

bool fits_32bit(const canon::CanonicalForm& form, const ListShape& shape) {
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 31;
  if (shape.total_words >= kLimit) return false;
  for (const canon::Dim& d : shape.rep) {
    if (static_cast<std::uint64_t>(d.count) >= kLimit) return false;
  }
  for (const canon::StridedBlock& sb : form.pieces) {
    for (const canon::Dim& d : sb.dims) {
      if (static_cast<std::uint64_t>(d.count) >= kLimit) return false;
    }
  }
  return true;
}

template <class Div>
std::vector<PieceDesc<Div>> piece_table(const canon::CanonicalForm& form, int word) {
  std::vector<PieceDesc<Div>> table;
  table.reserve(form.pieces.size());
  std::uint64_t first = 0;
  for (const canon::StridedBlock& sb : form.pieces) {
    PieceDesc<Div> d;
    d.offset = sb.offset;
    d.first_word = first;
    d.words_per_block = Div(static_cast<std::uint64_t>(sb.block / word));
    d.ndims = static_cast<int>(sb.dims.size());
    for (int k = 0; k < d.ndims; ++k) {
      d.count[k] = Div(static_cast<std::uint64_t>(sb.dims[k].count));
      d.stride[k] = sb.dims[k].stride;
    }
    first += static_cast<std::uint64_t>(sb.packed_bytes() / word);
    table.push_back(d);
  }
  return table;
}

template <class Div>
ListLaunch<Div> list_launch(const ListShape& shape, const PieceDesc<Div>* device_pieces,
                            int npieces) {
  ListLaunch<Div> l;
  l.pieces = device_pieces;
  l.npieces = npieces;
  l.words_per_rep = Div(shape.words_per_rep);
  l.nrep = static_cast<int>(shape.rep.size());
  for (int k = 0; k < l.nrep; ++k) {
    l.rep_count[k] = Div(static_cast<std::uint64_t>(shape.rep[k].count));
    l.rep_stride[k] = shape.rep[k].stride;
  }
  l.total_words = shape.total_words;
  return l;
}

template std::vector<PieceDesc<FastDivmod32>> piece_table(const canon::CanonicalForm&, int);
template std::vector<PieceDesc<Divmod64>> piece_table(const canon::CanonicalForm&, int);
template ListLaunch<FastDivmod32> list_launch(const ListShape&, const PieceDesc<FastDivmod32>*,
                                              int);
template ListLaunch<Divmod64> list_launch(const ListShape&, const PieceDesc<Divmod64>*, int);

}  // namespace strider::engine::cuda
