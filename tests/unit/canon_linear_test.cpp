// The one-walk canonicalizer against the whole-tree sweeps it replaced.
// The two apply the rules in different orders and may reach different trees, so both are held
// to what matters: the same typemap (the ordered bytes), as a tree and lowered, and a fixed point
// of every pass; on random trees, on long block lists, where the rewritten in-place passes and
// the direct block constructors matter, and through the lowering.
#include <gtest/gtest.h>

#include <random>

#include "canon/canonicalize.hpp"
#include "canon/passes.hpp"
#include "form_offsets.hpp"
#include "ir/constructors.hpp"
#include "ir/typemap.hpp"
#include "random_tree.hpp"

namespace strider {
namespace {

using ir::Node;

constexpr std::uint64_t kSeed = 20261124;

// The reference order: every pass over the whole tree, repeated until none changes it.
Node sweeps(Node n) {
  for (bool changed = true; changed;) {
    changed = false;
    for (const canon::Pass& pass : canon::all_passes()) changed |= pass.apply(n);
  }
  return n;
}

void expect_fixed_point(const Node& canonical) {
  for (const canon::Pass& pass : canon::all_passes()) {
    Node again = canonical;
    ASSERT_FALSE(pass.apply(again)) << pass.name << " still changes " << ir::to_string(canonical);
  }
}

TEST(CanonicalizeLinear, AgreesWithTheWholeTreeSweepsOnTheTypemap) {
  std::mt19937_64 rng(kSeed);
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  for (int t = 0; t < 20000; ++t) {
    const Node original = testing::random_tree(rng, 1 + t % 6);
    const Node canonical = canon::canonicalize(original);
    const Node reference = sweeps(original);
    const auto expected = ir::byte_offsets(original);
    ASSERT_EQ(ir::byte_offsets(canonical), expected) << ir::to_string(original);
    ASSERT_EQ(ir::byte_offsets(reference), expected) << ir::to_string(original);
    expect_fixed_point(canonical);
    ASSERT_EQ(canon::canonicalize(canonical), canonical) << ir::to_string(original);
    const auto form = canon::lower(canonical);
    ASSERT_TRUE(form.has_value());
    ASSERT_EQ(testing::form_offsets(*form), expected) << ir::to_string(canonical);
  }
}

// A list of `n` items: random small trees at irregular offsets, with stretches of one repeated
// shape at a constant step (which run detection turns into streams) and touching dense blocks
// (which block merging joins).
Node long_list(std::mt19937_64& rng, std::int64_t n) {
  std::vector<Node> items;
  items.reserve(static_cast<std::size_t>(n));
  std::int64_t at = 0;
  while (static_cast<std::int64_t>(items.size()) < n) {
    const std::int64_t kind = testing::pick(rng, 0, 3);
    const std::int64_t len = std::min<std::int64_t>(n - static_cast<std::int64_t>(items.size()),
                                                    kind == 0 ? testing::pick(rng, 2, 300) : 1);
    Node unit = kind == 1 ? testing::random_tree(rng, 3) : Node::dense(0, testing::pick(rng, 1, 9));
    const ir::Span span = ir::true_span(unit);
    const std::int64_t step = span.hi - span.lo + (kind == 2 ? 0 : testing::pick(rng, 0, 5));
    for (std::int64_t k = 0; k < len; ++k) {
      Node item = unit;
      item.offset += at - span.lo;
      at += step;
      items.push_back(std::move(item));
    }
    at += testing::pick(rng, 0, 7);
  }
  return Node::list(std::move(items));
}

TEST(CanonicalizeLinear, TracingDoesNotChangeTheResult) {
  std::mt19937_64 rng(kSeed + 4);
  for (int t = 0; t < 2000; ++t) {
    const Node original = testing::random_tree(rng, 1 + t % 6);
    std::vector<canon::Step> steps;
    const Node canonical = canon::canonicalize(original, &steps);
    ASSERT_EQ(canonical, canon::canonicalize(original));
    if (!steps.empty()) ASSERT_EQ(steps.back().result, canonical);
  }
  // A long list: the trace keeps its first steps and the result.
  std::vector<Node> items;
  for (int i = 0; i < 2000; ++i) items.push_back(Node::stream(7 * i, 1, 3, Node::dense(0, 2)));
  std::vector<canon::Step> steps;
  const Node canonical = canon::canonicalize(Node::list(std::move(items)), &steps);
  ASSERT_EQ(steps.size(), 257u);
  EXPECT_EQ(steps.back().result, canonical);
  EXPECT_EQ(canonical, Node::stream(0, 2000, 7, Node::dense(0, 2)));
}

TEST(CanonicalizeLinear, LongListsKeepTheTypemap) {
  std::mt19937_64 rng(kSeed + 1);
  for (std::int64_t n : {1000, 10000, 100000}) {
    const Node original = long_list(rng, n);
    const auto expected = ir::byte_offsets(original);
    const Node canonical = canon::canonicalize(original);
    ASSERT_EQ(ir::byte_offsets(canonical), expected) << n << " items";
    expect_fixed_point(canonical);
    const auto form = canon::lower(canonical);
    ASSERT_TRUE(form.has_value());
    ASSERT_EQ(testing::form_offsets(*form), expected) << n << " items";
    if (n <= 10000) ASSERT_EQ(ir::byte_offsets(sweeps(original)), expected) << n << " items";
  }
}

// Reference for the block constructors: every block spelled out as the standard's stream of
// `blocklength` child elements, which the constructors may build more directly.
Node blocks_as_streams(std::span<const std::int64_t> lengths, std::span<const std::int64_t> disps,
                       const ir::Child& child) {
  std::vector<Node> items;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    items.push_back(Node::stream(disps[i], lengths[i], child.extent, child.layout));
  }
  return Node::list(std::move(items));
}

TEST(CanonicalizeLinear, BlockConstructorsKeepTheTypemap) {
  std::mt19937_64 rng(kSeed + 2);
  for (int t = 0; t < 3000; ++t) {
    // Dense children (the direct path) and random ones, with offsets and extents that differ.
    const Node layout = t % 2 ? Node::dense(testing::pick(rng, -3, 3), testing::pick(rng, 1, 6))
                              : testing::random_tree(rng, 3);
    const ir::Span span = ir::true_span(layout);
    const std::int64_t extent =
        t % 3 == 0 ? span.hi - span.lo : span.hi - span.lo + testing::pick(rng, -1, 3);
    const ir::Child child{layout, extent};
    const std::size_t n = static_cast<std::size_t>(testing::pick(rng, 0, 12));
    std::vector<std::int64_t> lengths(n), disps(n);
    for (std::size_t i = 0; i < n; ++i) {
      lengths[i] = testing::pick(rng, 0, 3);
      disps[i] = testing::pick(rng, -40, 40);
    }
    const auto expected = ir::byte_offsets(blocks_as_streams(lengths, disps, child));
    ASSERT_EQ(ir::byte_offsets(ir::hindexed(lengths, disps, child)), expected)
        << ir::to_string(layout) << " extent " << extent;
    const std::vector<ir::Child> children(n, child);
    ASSERT_EQ(ir::byte_offsets(ir::structure(lengths, disps, children)), expected);
    std::vector<std::int64_t> element_disps(n);
    for (std::size_t i = 0; i < n; ++i) element_disps[i] = disps[i] * extent;
    ASSERT_EQ(ir::byte_offsets(ir::indexed(lengths, disps, child)),
              ir::byte_offsets(blocks_as_streams(lengths, element_disps, child)));
  }
}

TEST(CanonicalizeLinear, LongRunsCollapse) {
  // 100000 blocks of 4 ints every 8 ints: one strided block.
  const std::int64_t n = 100000;
  std::vector<std::int64_t> lengths(n, 4), disps(n);
  for (std::int64_t i = 0; i < n; ++i) disps[i] = 8 * i;
  const Node regular = ir::indexed(lengths, disps, {Node::dense(0, 4), 4});
  const auto form = canon::canonical_form(regular);
  ASSERT_TRUE(form.has_value());
  ASSERT_TRUE(form->strided());
  EXPECT_EQ(form->pieces.front(), (canon::StridedBlock{0, 16, {{n, 32}}}));
  // Runs of 256 broken by jumps that all differ: one stream per run, and lowered, two runs of one
  // shape pair up into a two-dim piece (any two do), but no longer progression forms.
  for (std::int64_t i = 0; i < n; ++i) disps[i] = 8 * i + (i / 256) * (i / 256 + 1) / 2;
  const Node broken = ir::indexed(lengths, disps, {Node::dense(0, 4), 4});
  const auto runs = canon::canonical_form(broken);
  ASSERT_TRUE(runs.has_value());
  const std::int64_t run_count = (n + 255) / 256;
  EXPECT_EQ(canon::canonicalize(broken).children.size(), static_cast<std::size_t>(run_count));
  EXPECT_EQ(runs->pieces.size(), static_cast<std::size_t>((run_count + 1) / 2));
  EXPECT_EQ(testing::form_offsets(*runs), ir::byte_offsets(broken));
}

TEST(CanonicalizeLinear, StructOfTwoLongHindexed) {
  std::mt19937_64 rng(kSeed + 3);
  const std::size_t n = 50000;
  std::vector<std::int64_t> lengths(n), disps(n);
  std::int64_t at = 0;
  for (std::size_t i = 0; i < n; ++i) {
    lengths[i] = testing::pick(rng, 1, 8);
    disps[i] = at;
    at += 4 * (lengths[i] + testing::pick(rng, 0, 7));
  }
  const ir::Child integer{Node::dense(0, 4), 4};
  const ir::Child half{ir::hindexed(lengths, disps, integer), at};
  const std::int64_t one[] = {1, 1}, where[] = {0, at + 64};
  const ir::Child halves[] = {half, half};
  const Node s = ir::structure(one, where, halves);
  const auto expected = ir::byte_offsets(s);
  const Node canonical = canon::canonicalize(s);
  ASSERT_EQ(ir::byte_offsets(canonical), expected);
  expect_fixed_point(canonical);
  ASSERT_EQ(ir::byte_offsets(sweeps(s)), expected);
  const auto form = canon::lower(canonical);
  ASSERT_TRUE(form.has_value());
  EXPECT_EQ(testing::form_offsets(*form), expected);
}

}  // namespace
}  // namespace strider
