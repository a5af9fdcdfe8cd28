// Canonicalization never changes the ordered byte offsets (the typemap), pass by pass and as a
// whole, and equivalent constructions reach the same canonical form.
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

constexpr std::uint64_t kSeed = 20261121;
constexpr int kTrees = 20000;

TEST(Canonicalize, EveryPassPreservesTheTypemap) {
  std::mt19937_64 rng(kSeed);
  SCOPED_TRACE("seed " + std::to_string(kSeed));
  for (int t = 0; t < kTrees; ++t) {
    const Node original = testing::random_tree(rng, 1 + t % 5);
    const auto expected = ir::byte_offsets(original);
    for (const canon::Pass& pass : canon::all_passes()) {
      Node rewritten = original;
      pass.apply(rewritten);
      ASSERT_EQ(ir::byte_offsets(rewritten), expected)
          << pass.name << " on " << ir::to_string(original) << " gave " << ir::to_string(rewritten);
    }
  }
}

TEST(Canonicalize, FixedPointPreservesTypemapAndIsIdempotent) {
  std::mt19937_64 rng(kSeed + 1);
  for (int t = 0; t < kTrees; ++t) {
    const Node original = testing::random_tree(rng, 1 + t % 5);
    const Node canonical = canon::canonicalize(original);
    const auto expected = ir::byte_offsets(original);
    ASSERT_EQ(ir::byte_offsets(canonical), expected) << ir::to_string(original);
    ASSERT_EQ(canon::canonicalize(canonical), canonical) << ir::to_string(original);
    ASSERT_EQ(ir::packed_size(canonical), ir::packed_size(original));
    auto form = canon::lower(canonical);
    ASSERT_TRUE(form.has_value());
    ASSERT_EQ(testing::form_offsets(*form), expected) << ir::to_string(canonical);
    ASSERT_EQ(form->size, static_cast<std::int64_t>(expected.size()));
    for (std::size_t i = 1; i < form->pieces.size(); ++i) {
      canon::StridedBlock run = form->pieces[i - 1];
      ASSERT_FALSE(canon::try_append(run, form->pieces[i])) << "pieces left unmerged";
    }
  }
}

TEST(Canonicalize, CanonicalTreesAreNormalized) {
  std::mt19937_64 rng(kSeed + 2);
  for (int t = 0; t < kTrees; ++t) {
    const Node canonical = canon::canonicalize(testing::random_tree(rng, 1 + t % 5));
    // Post-conditions of the fixed point, checked on every node.
    std::function<void(const Node&, bool)> check = [&](const Node& n, bool root) {
      if (n.is_stream()) {
        EXPECT_GE(n.count, 2);
        EXPECT_EQ(n.child().offset, 0);
        if (n.child().is_dense()) EXPECT_NE(n.stride, n.child().bytes);
        if (n.child().is_stream()) EXPECT_NE(n.stride, n.child().count * n.child().stride);
      }
      if (n.is_list()) {
        if (!root || !n.children.empty()) EXPECT_GE(n.children.size(), 2u);
        EXPECT_EQ(n.offset, 0);
        for (const Node& c : n.children) EXPECT_FALSE(c.is_list());
      }
      if (n.is_dense()) EXPECT_GT(n.bytes, 0);
      for (const Node& c : n.children) check(c, false);
    };
    check(canonical, true);
  }
}

canon::CanonicalForm form_of(const Node& n) { return *canon::canonical_form(n); }

const ir::Child kByte{Node::dense(0, 1), 1};

TEST(Canonicalize, ThreeConstructionsOfABoxAgree) {
  // A 100 x 13 x 47-byte box inside a 256 x 512 x 1024-byte array (x fastest).
  const std::int64_t sizes[] = {1024, 512, 256}, sub[] = {47, 13, 100}, start0[] = {0, 0, 0};
  const Node a = ir::subarray(ir::Order::C, sizes, sub, start0, kByte);

  const std::int64_t sizes2[] = {512, 256}, sub2[] = {13, 100}, start2[] = {0, 0};
  const Node plane = ir::subarray(ir::Order::C, sizes2, sub2, start2, kByte);
  const Node b = ir::vector(47, 1, 1, {plane, 256 * 512});

  const Node row = ir::vector(100, 1, 1, kByte);
  const Node c = ir::hvector(47, 1, 256 * 512, {ir::hvector(13, 1, 256, {row, 100}), 256});

  EXPECT_EQ(form_of(a), form_of(b));
  EXPECT_EQ(form_of(a), form_of(c));
  ASSERT_TRUE(form_of(a).strided());
  const canon::StridedBlock expected{0, 100, {{13, 256}, {47, 256 * 512}}};
  EXPECT_EQ(form_of(a).pieces.front(), expected);
}

TEST(Canonicalize, FloatEqualsFourBytes) {
  const Node as_float = Node::dense(0, 4);
  const std::int64_t ones[] = {1, 1, 1, 1}, disps[] = {0, 1, 2, 3};
  const Node as_bytes = ir::hindexed(ones, disps, kByte);
  EXPECT_EQ(form_of(as_float), form_of(as_bytes));
  EXPECT_EQ(form_of(ir::contiguous(4, kByte)), form_of(as_float));
}

TEST(Canonicalize, IndexedRegularBlocksBecomeStrided) {
  const std::int64_t lengths[] = {2, 2, 2, 2}, disps[] = {0, 10, 20, 30};
  const Node list = ir::indexed(lengths, disps, {Node::dense(0, 4), 4});
  const Node vec = ir::vector(4, 2, 10, {Node::dense(0, 4), 4});
  EXPECT_EQ(form_of(list), form_of(vec));
  EXPECT_TRUE(form_of(list).strided());
  // Split blocks that touch merge first: (0,1)(1,1) == (0,2).
  const std::int64_t l2[] = {1, 1, 2, 2, 2}, d2[] = {0, 1, 10, 20, 30};
  EXPECT_EQ(form_of(ir::indexed(l2, d2, {Node::dense(0, 4), 4})), form_of(vec));
}

TEST(Canonicalize, TransposedOrderIsKept) {
  // Column-major walk of a 3x4 row-major int matrix: the outer stride is smaller than the inner
  // one. Sorting dims by stride would pack it in row order, which is wrong.
  const Node column = ir::vector(3, 1, 4, {Node::dense(0, 4), 4});
  const Node transposed = ir::hvector(4, 1, 4, {column, 4});
  const auto form = form_of(transposed);
  ASSERT_TRUE(form.strided());
  const canon::StridedBlock expected{0, 4, {{3, 16}, {4, 4}}};
  EXPECT_EQ(form.pieces.front(), expected);
}

TEST(Canonicalize, SubsizeOneKeepsItsStart) {
  const std::int64_t sizes[] = {8, 8, 8}, sub[] = {1, 2, 8}, starts[] = {5, 3, 0};
  const auto form = form_of(ir::subarray(ir::Order::C, sizes, sub, starts, kByte));
  ASSERT_TRUE(form.strided());
  EXPECT_EQ(form.pieces.front().offset, 5 * 64 + 3 * 8);
  EXPECT_EQ(form.pieces.front().block, 16);  // two full rows are contiguous
  EXPECT_TRUE(form.pieces.front().dims.empty());
}

TEST(Canonicalize, VectorOfStructWithHole) {
  // struct {char at 0; int at 4} repeated: two pieces per element, lowered to strided pieces.
  const std::int64_t lengths[] = {1, 1}, disps[] = {0, 4};
  const ir::Child members[] = {{Node::dense(0, 1), 1}, {Node::dense(0, 4), 4}};
  const Node s = ir::structure(lengths, disps, members);
  // Inside a list, the struct is unrolled: bytes 0 | 4..8 | 12..16 | 20..23 (each int touches
  // the next char). At the root, the struct's two pieces are repeated instead.
  const Node tail = Node::dense(100, 1);
  const auto unrolled = form_of(Node::list({ir::contiguous(3, {s, 8}), tail}));
  EXPECT_EQ(unrolled.size, 16);
  const std::vector<canon::StridedBlock> expected{
      {0, 1, {}}, {4, 5, {{2, 8}}}, {20, 4, {}}, {100, 1, {}}};
  EXPECT_EQ(unrolled.pieces, expected);
  EXPECT_TRUE(unrolled.repeat.empty());

  const auto repeated = form_of(ir::contiguous(3, {s, 8}));
  EXPECT_EQ(repeated.size, 15);
  EXPECT_EQ(repeated.pieces, (std::vector<canon::StridedBlock>{{0, 1, {}}, {4, 4, {}}}));
  EXPECT_EQ(repeated.repeat, (canon::DimList{{3, 8}}));
}

TEST(Canonicalize, EmptyTypes) {
  EXPECT_TRUE(form_of(ir::contiguous(0, kByte)).pieces.empty());
  EXPECT_TRUE(form_of(Node::list({})).pieces.empty());
  EXPECT_TRUE(form_of(ir::vector(3, 0, 2, kByte)).pieces.empty());
}

TEST(Canonicalize, LoweringRespectsThePieceBudget) {
  const std::int64_t lengths[] = {1, 1, 1}, disps[] = {0, 2, 5};
  const Node s = ir::hindexed(lengths, disps, kByte);
  // Unrolled inside a list (the trailing byte keeps the stream from being the root).
  const Node big = Node::list({ir::contiguous(1000, {s, 7}), Node::dense(-10, 1)});
  EXPECT_FALSE(canon::lower(canon::canonicalize(big), 100).has_value());
  EXPECT_TRUE(canon::lower(canon::canonicalize(big), 4000).has_value());
  // At the root the same stream repeats its pieces, whatever its count.
  const auto root = canon::lower(canon::canonicalize(ir::contiguous(1000000, {s, 7})), 100);
  ASSERT_TRUE(root.has_value());
  EXPECT_EQ(root->pieces.size(), 2u);  // {0, 1, 2x2} and {5, 1}
}

TEST(Canonicalize, TraceRecordsEachChange) {
  std::vector<canon::Step> steps;
  const Node row = ir::vector(100, 1, 1, kByte);
  canon::canonicalize(ir::hvector(13, 1, 256, {row, 100}), &steps);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.back().result, Node::stream(0, 13, 256, Node::dense(0, 100)));
}

}  // namespace
}  // namespace strider
