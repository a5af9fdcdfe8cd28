// normalized() and try_append() keep the byte sequence; checked for every index of small shapes.
#include "canon/strided_block.hpp"

#include <gtest/gtest.h>

#include <random>

#include "random_tree.hpp"

namespace strider::canon {
namespace {

std::vector<std::int64_t> offsets(const StridedBlock& sb) {
  std::vector<std::int64_t> out;
  const std::int64_t blocks = sb.blocks();
  for (std::int64_t b = 0; b < blocks; ++b) {
    std::int64_t rest = b, at = sb.offset;
    for (const Dim& d : sb.dims) {
      at += (rest % d.count) * d.stride;
      rest /= d.count;
    }
    for (std::int64_t i = 0; i < sb.block; ++i) out.push_back(at + i);
  }
  return out;
}

StridedBlock random_block(std::mt19937_64& rng) {
  StridedBlock sb{testing::pick(rng, -10, 10), testing::pick(rng, 0, 6), {}};
  const int n = static_cast<int>(testing::pick(rng, 0, 4));
  for (int k = 0; k < n; ++k) {
    std::int64_t stride;
    switch (testing::pick(rng, 0, 3)) {
      case 0:
        stride = sb.block;
        break;
      case 1:
        stride = sb.dims.empty() ? sb.block * 2 : sb.dims.back().count * sb.dims.back().stride;
        break;
      default:
        stride = testing::pick(rng, -12, 24);
        break;
    }
    sb.dims.push_back({testing::pick(rng, 0, 4) == 0 ? 1 : testing::pick(rng, 1, 4), stride});
  }
  return sb;
}

TEST(StridedBlock, NormalizedKeepsBytesAndIsIdempotent) {
  std::mt19937_64 rng(7);
  for (int t = 0; t < 50000; ++t) {
    const StridedBlock sb = random_block(rng);
    const StridedBlock n = normalized(sb);
    ASSERT_EQ(offsets(n), offsets(sb)) << to_string(sb) << " -> " << to_string(n);
    ASSERT_EQ(normalized(n), n);
    for (const Dim& d : n.dims) ASSERT_GE(d.count, 2);
  }
}

TEST(StridedBlock, TryAppendConcatenatesExactly) {
  std::mt19937_64 rng(8);
  int merged = 0;
  for (int t = 0; t < 50000; ++t) {
    StridedBlock a = normalized(random_block(rng));
    StridedBlock b = a;
    // Often continue a's progression, sometimes not.
    if (!a.dims.empty() && testing::pick(rng, 0, 1)) {
      b.dims.pop_back();
      b.offset = a.offset + a.dims.back().count * a.dims.back().stride;
    } else {
      b.offset = a.offset + testing::pick(rng, -4, 40);
    }
    b = normalized(b);
    auto expected = offsets(a);
    const auto tail = offsets(b);
    expected.insert(expected.end(), tail.begin(), tail.end());
    StridedBlock run = a;
    if (try_append(run, b)) {
      ++merged;
      ASSERT_EQ(offsets(run), expected) << to_string(a) << " + " << to_string(b);
    } else {
      ASSERT_EQ(run, a);
    }
  }
  EXPECT_GT(merged, 1000);
}

TEST(StridedBlock, Examples) {
  EXPECT_EQ(normalized({0, 4, {{3, 4}}}), (StridedBlock{0, 12, {}}));
  EXPECT_EQ(normalized({0, 4, {{3, 8}, {2, 24}}}), (StridedBlock{0, 4, {{6, 8}}}));
  EXPECT_EQ(normalized({5, 4, {{1, 100}, {0, 8}}}), StridedBlock{});
  StridedBlock run{0, 2, {}};
  EXPECT_TRUE(try_append(run, {10, 2, {}}));
  EXPECT_TRUE(try_append(run, {20, 2, {}}));
  EXPECT_EQ(run, (StridedBlock{0, 2, {{3, 10}}}));
  EXPECT_FALSE(try_append(run, {31, 2, {}}));
}

}  // namespace
}  // namespace strider::canon
