// The kernels' index arithmetic, run on the host for every packed word of random canonical
// forms, counts and base alignments, against the host engine's byte order: launch shapes,
// piece tables and fast division are all checked here without a GPU.
#include "engine/cuda/word_offset.hpp"

#include <gtest/gtest.h>

#include <random>

#include "canon/canonicalize.hpp"
#include "engine/cpu/pack.hpp"
#include "ir/typemap.hpp"
#include "random_tree.hpp"

namespace strider::engine::cuda {
namespace {

// Byte offsets (from the origin) of the packed stream, in order, by the host engine: pack a
// buffer whose 32-bit cells hold their own offsets... simpler: pack indices byte by byte.
std::vector<std::int64_t> expected_offsets(const canon::CanonicalForm& form, std::int64_t extent,
                                           std::int64_t count, std::int64_t lo, std::int64_t hi) {
  // Each byte of a buffer spanning [lo, hi) is tagged with its offset through 8 byte planes.
  const auto span = static_cast<std::size_t>(hi - lo);
  std::vector<std::int64_t> out(static_cast<std::size_t>(form.size * count), 0);
  for (int plane = 0; plane < 8; ++plane) {
    std::vector<std::byte> buffer(span), packed(out.size());
    for (std::size_t i = 0; i < span; ++i) {
      const auto offset = static_cast<std::uint64_t>(static_cast<std::int64_t>(i) + lo);
      buffer[i] = static_cast<std::byte>(offset >> (8 * plane));
    }
    cpu::pack(form, extent, count, buffer.data() - lo, packed.data());
    for (std::size_t k = 0; k < out.size(); ++k) {
      out[k] |= static_cast<std::int64_t>(static_cast<std::uint64_t>(packed[k]) << (8 * plane));
    }
  }
  return out;
}

template <class Div, int W>
std::vector<std::int64_t> word_offsets(const canon::CanonicalForm& form, std::int64_t extent,
                                       std::int64_t count, std::uintptr_t origin,
                                       std::uintptr_t packed) {
  using Index = typename IndexOf<Div>::type;
  std::vector<std::int64_t> out;
  if (auto s = strided_shape(form, extent, count, origin, packed)) {
    const auto l = std::is_same_v<Div, FastDivmod32> ? StridedLaunch<Div>{} : StridedLaunch<Div>{};
    (void)l;
    StridedLaunch<Div> launch;
    if constexpr (std::is_same_v<Div, FastDivmod32>) {
      launch = launch32(*s);
    } else {
      launch = launch64(*s);
    }
    for (std::uint64_t p = 0; p < s->total_words; ++p) {
      const std::int64_t at = strided_offset<W, Div, kMaxLaunchDims>(
          launch.offset, launch.words_per_block, launch.ndims, launch.count, launch.stride,
          static_cast<Index>(p));
      for (int b = 0; b < W; ++b) out.push_back(at + b);
    }
    return out;
  }
  auto shape = list_shape(form, extent, count, origin, packed);
  EXPECT_TRUE(shape.has_value());
  const auto table = list_table<Div>(form, W);
  const auto launch = list_launch<Div>(*shape, table.data(), static_cast<int>(form.pieces.size()));
  for (std::uint64_t p = 0; p < shape->total_words; ++p) {
    const std::int64_t at = list_offset<W>(launch, static_cast<Index>(p));
    for (int b = 0; b < W; ++b) out.push_back(at + b);
  }
  return out;
}

template <class Div>
std::vector<std::int64_t> word_offsets_any(int word, const canon::CanonicalForm& form,
                                           std::int64_t extent, std::int64_t count,
                                           std::uintptr_t origin, std::uintptr_t packed) {
  switch (word) {
    case 16:
      return word_offsets<Div, 16>(form, extent, count, origin, packed);
    case 8:
      return word_offsets<Div, 8>(form, extent, count, origin, packed);
    case 4:
      return word_offsets<Div, 4>(form, extent, count, origin, packed);
    case 2:
      return word_offsets<Div, 2>(form, extent, count, origin, packed);
    default:
      return word_offsets<Div, 1>(form, extent, count, origin, packed);
  }
}

TEST(WordOffsets, KernelsIndexMathMatchesTheHostEngine) {
  std::mt19937_64 rng(31337);
  int strided = 0, lists = 0;
  for (int t = 0; t < 6000; ++t) {
    const ir::Node tree = strider::testing::random_tree(rng, 1 + t % 5);
    const auto form = canon::canonical_form(tree);
    ASSERT_TRUE(form.has_value());
    if (form->size == 0) continue;
    const ir::Span span = ir::true_span(tree);
    const std::int64_t extent =
        std::max<std::int64_t>(1, span.hi - span.lo) + strider::testing::pick(rng, -2, 6);
    const std::int64_t count = strider::testing::pick(rng, 1, 3);
    std::int64_t lo = span.lo, hi = span.hi;
    for (std::int64_t e = 0; e < count; ++e) {
      lo = std::min(lo, span.lo + e * extent);
      hi = std::max(hi, span.hi + e * extent);
    }
    const auto want = expected_offsets(*form, extent, count, lo, hi);
    // Aligned and misaligned bases: the word size follows.
    const std::uintptr_t origin = 0x10000 + 16 * strider::testing::pick(rng, 0, 4) +
                                  (strider::testing::pick(rng, 0, 1) ? 0 : rng() % 16);
    const std::uintptr_t packed = 0x90000 + (strider::testing::pick(rng, 0, 1) ? 0 : rng() % 16);
    int word = 0;
    if (auto s = strided_shape(*form, extent, count, origin, packed)) {
      word = s->word;
      ++strided;
    } else {
      auto l = list_shape(*form, extent, count, origin, packed);
      ASSERT_TRUE(l.has_value());
      word = l->word;
      ++lists;
    }
    EXPECT_EQ(word_offsets_any<FastDivmod32>(word, *form, extent, count, origin, packed), want)
        << ir::to_string(tree) << " -> " << canon::to_string(*form) << " count " << count
        << " extent " << extent << " word " << word;
    EXPECT_EQ(word_offsets_any<Divmod64>(word, *form, extent, count, origin, packed), want);
    if (HasFailure()) return;
  }
  std::printf("strided forms %d, block lists %d\n", strided, lists);
  EXPECT_GT(lists, 500);
}

TEST(FastDivmod, ExactForEdgesAndRandomDividends) {
  std::mt19937_64 rng(5);
  std::vector<std::uint32_t> divisors{
      1,     2,     3,     5,          7,           255,         256,         257,
      65535, 65536, 65537, 0x7fffffff, 0x80000000u, 0x80000001u, 0xfffffffeu, 0xffffffffu};
  for (int i = 0; i < 200; ++i) divisors.push_back(static_cast<std::uint32_t>(rng() | 1));
  for (std::uint32_t d : divisors) {
    const FastDivmod32 div(d);
    std::vector<std::uint32_t> ns{0, 1, d - 1, d, d + 1, 0x7fffffffu, 0x80000000u, 0xffffffffu};
    for (int i = 0; i < 2000; ++i) ns.push_back(static_cast<std::uint32_t>(rng()));
    for (std::uint32_t n : ns) {
      std::uint32_t q, r;
      div.divmod(n, q, r);
      ASSERT_EQ(q, n / d) << n << " / " << d;
      ASSERT_EQ(r, n % d) << n << " % " << d;
    }
  }
}

}  // namespace
}  // namespace strider::engine::cuda
