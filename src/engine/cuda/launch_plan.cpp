#include "engine/cuda/launch_plan.hpp"

#include <algorithm>
#include <cstring>

namespace strider::engine::cuda {

unsigned grid_for(std::uint64_t total_words, int word, int multiprocessors) {
  const int unroll = Policy::unroll(word);
  const std::uint64_t per_block = std::uint64_t{Policy::kThreads} * unroll;
  const std::uint64_t wanted = (total_words + per_block - 1) / per_block;
  const std::uint64_t cap =
      unroll == 1 ? std::uint64_t{1} << 30
                  : static_cast<std::uint64_t>(std::max(multiprocessors, 1)) * Policy::kBlocksPerSm;
  return static_cast<unsigned>(std::max<std::uint64_t>(1, std::min(wanted, cap)));
}

int word_size_for(std::initializer_list<std::uint64_t> values) {
  int word = 16;
  for (std::uint64_t v : values) {
    while (word > 1 && v % static_cast<std::uint64_t>(word) != 0) word /= 2;
  }
  return word;
}

std::optional<StridedShape> strided_shape(const canon::CanonicalForm& form, std::int64_t extent,
                                          std::int64_t count, std::uintptr_t user_origin,
                                          std::uintptr_t packed, int max_word) {
  if (!form.strided() || count <= 0) return std::nullopt;
  StridedShape shape;
  shape.block = form.pieces.front();
  if (count > 1) {
    if (shape.block.dims.size() == canon::kMaxDims) return std::nullopt;
    shape.block.dims.push_back(canon::Dim{count, extent});
  }
  shape.block = canon::normalized(shape.block);
  if (shape.block.empty()) return std::nullopt;
  std::uint64_t align = static_cast<std::uint64_t>(shape.block.block) |
                        static_cast<std::uint64_t>(user_origin + shape.block.offset) |
                        static_cast<std::uint64_t>(packed);
  for (const canon::Dim& d : shape.block.dims) align |= canon::magnitude(d.stride);
  // Blocks of 4 bytes or less: a thread per byte is faster than a thread per word (bench/pack,
  // H200: 4-byte blocks at a 512-byte stride, 4 MiB, 32 us instead of 38 us), as more warps
  // keep more of the scattered sectors in flight.
  shape.word = std::min(word_size_for({align}), shape.block.block <= 4 ? 1 : max_word);
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

namespace {}  // namespace

std::optional<ListShape> list_shape(const canon::CanonicalForm& form, std::int64_t extent,
                                    std::int64_t count, std::uintptr_t user_origin,
                                    std::uintptr_t packed, int max_word) {
  if (form.pieces.empty() || count <= 0) return std::nullopt;
  // O(repeat dims): the pieces enter through the form's summaries only.
  ListShape shape;
  std::uint64_t align = form.layout_bits | static_cast<std::uint64_t>(user_origin) |
                        static_cast<std::uint64_t>(packed);
  shape.rep = form.repeat;
  for (const canon::Dim& d : form.repeat) align |= canon::magnitude(d.stride);
  if (count > 1) {
    if (shape.rep.size() == canon::kMaxDims) return std::nullopt;
    shape.rep.push_back(canon::Dim{count, extent});
    align |= canon::magnitude(extent);
  }
  shape.word = std::min(word_size_for({align}), max_word);
  const auto word = static_cast<std::uint64_t>(shape.word);
  shape.words_per_rep = static_cast<std::uint64_t>(form.size / form.repetitions()) / word;
  shape.total_words =
      static_cast<std::uint64_t>(form.size) * static_cast<std::uint64_t>(count) / word;
  return shape;
}

bool fits_32bit(const canon::CanonicalForm& form, const ListShape& shape) {
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 31;
  if (shape.total_words >= kLimit) return false;
  for (const canon::Dim& d : shape.rep) {
    if (static_cast<std::uint64_t>(d.count) >= kLimit) return false;
  }
  return static_cast<std::uint64_t>(form.max_piece_count) < kLimit;
}

namespace {

struct TableLayout {
  std::size_t first_words, chunk_first, bytes;
};

template <class Div>
TableLayout table_layout(std::size_t npieces, std::size_t nchunks) {
  TableLayout t;
  t.first_words = npieces * sizeof(PieceDesc<Div>);
  t.chunk_first = t.first_words + npieces * sizeof(std::uint64_t);
  t.bytes = t.chunk_first + (nchunks + 1) * sizeof(std::uint32_t);
  return t;
}

std::size_t chunks_of(std::uint64_t words) {
  return static_cast<std::size_t>((words + (std::uint64_t{1} << Policy::kChunkShift) - 1) >>
                                  Policy::kChunkShift);
}

}  // namespace

template <class Div>
std::vector<std::byte> list_table(const canon::CanonicalForm& form, int word) {
  const std::size_t n = form.pieces.size();
  std::vector<PieceDesc<Div>> pieces(n);
  std::vector<std::uint64_t> first_words(n);
  std::uint64_t first = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const canon::StridedBlock& sb = form.pieces[i];
    PieceDesc<Div>& d = pieces[i];
    d.offset = sb.offset;
    d.first_word = first;
    d.words_per_block = Div(static_cast<std::uint64_t>(sb.block / word));
    d.ndims = static_cast<int>(sb.dims.size());
    for (int k = 0; k < d.ndims; ++k) {
      d.count[k] = Div(static_cast<std::uint64_t>(sb.dims[k].count));
      d.stride[k] = sb.dims[k].stride;
    }
    first_words[i] = first;
    first += static_cast<std::uint64_t>(sb.packed_bytes() / word);
  }
  // chunk_first[c]: the piece holding word c << Policy::kChunkShift; the last entry closes the
  // range.
  const std::size_t nchunks = chunks_of(first);
  std::vector<std::uint32_t> chunk_first(nchunks + 1);
  std::size_t piece = 0;
  for (std::size_t c = 0; c < nchunks; ++c) {
    const std::uint64_t w = static_cast<std::uint64_t>(c) << Policy::kChunkShift;
    while (piece + 1 < n && first_words[piece + 1] <= w) ++piece;
    chunk_first[c] = static_cast<std::uint32_t>(piece);
  }
  chunk_first[nchunks] = static_cast<std::uint32_t>(n - 1);
  const TableLayout t = table_layout<Div>(n, nchunks);
  std::vector<std::byte> bytes(t.bytes);
  std::memcpy(bytes.data(), pieces.data(), n * sizeof(PieceDesc<Div>));
  std::memcpy(bytes.data() + t.first_words, first_words.data(), n * sizeof(std::uint64_t));
  std::memcpy(bytes.data() + t.chunk_first, chunk_first.data(),
              chunk_first.size() * sizeof(std::uint32_t));
  return bytes;
}

template <class Div>
ListLaunch<Div> list_launch(const ListShape& shape, const std::byte* table, int npieces) {
  const TableLayout t =
      table_layout<Div>(static_cast<std::size_t>(npieces), chunks_of(shape.words_per_rep));
  ListLaunch<Div> l;
  l.pieces = reinterpret_cast<const PieceDesc<Div>*>(table);
  l.first_words = reinterpret_cast<const std::uint64_t*>(table + t.first_words);
  l.chunk_first = reinterpret_cast<const std::uint32_t*>(table + t.chunk_first);
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

template std::vector<std::byte> list_table<FastDivmod32>(const canon::CanonicalForm&, int);
template std::vector<std::byte> list_table<Divmod64>(const canon::CanonicalForm&, int);
template ListLaunch<FastDivmod32> list_launch(const ListShape&, const std::byte*, int);
template ListLaunch<Divmod64> list_launch(const ListShape&, const std::byte*, int);

}  // namespace strider::engine::cuda
