// The measured sizes: documented axes, and the 3D inner count strider-measure builds objects with.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "model/grid.hpp"

namespace strider::model::grid {
namespace {

std::vector<double> Powers(double first, double factor, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i, first *= factor) out.push_back(first);
  return out;
}

void ExpectStrictlyAscendingAndPositive(const std::vector<double>& axis) {
  ASSERT_FALSE(axis.empty());
  EXPECT_GT(axis.front(), 0);
  for (std::size_t i = 1; i < axis.size(); ++i) EXPECT_LT(axis[i - 1], axis[i]) << i;
}

TEST(ModelGrid, BlockBytesArePowersOfTwoFrom1To4096) {
  EXPECT_EQ(block_bytes(), Powers(1, 2, 13));  // 1 .. 2^12
  EXPECT_EQ(block_bytes().back(), 4096);
}

TEST(ModelGrid, ObjectBytesArePowersOfFourFrom64To64Mi) {
  EXPECT_EQ(object_bytes(), Powers(64, 4, 11));  // 4^3 .. 4^13
  EXPECT_EQ(object_bytes().back(), 64.0 * 1024 * 1024);
}

TEST(ModelGrid, TransferBytesArePowersOfTwoFrom1To64Mi) {
  EXPECT_EQ(transfer_bytes(), Powers(1, 2, 27));  // 2^0 .. 2^26
  EXPECT_EQ(transfer_bytes().back(), 64.0 * 1024 * 1024);
}

TEST(ModelGrid, StrideRatiosAndDims) {
  EXPECT_EQ(stride_ratios(), (std::vector<double>{2, 8}));
  EXPECT_EQ(shape_dims(), (std::vector<int>{2, 3}));
}

TEST(ModelGrid, EveryAxisIsAValidInterpolationAxis) {
  for (const auto& axis : {block_bytes(), object_bytes(), transfer_bytes(), stride_ratios()}) {
    ExpectStrictlyAscendingAndPositive(axis);
  }
}

TEST(ModelGrid, ObjectAxisStepsAtMostFourAndBlockAxisAtMostTwo) {
  // The header promises interpolation within a factor of 2 (blocks) or 4 (objects).
  const auto blocks = block_bytes(), objects = object_bytes();
  for (std::size_t i = 1; i < blocks.size(); ++i) EXPECT_LE(blocks[i] / blocks[i - 1], 2);
  for (std::size_t i = 1; i < objects.size(); ++i) EXPECT_LE(objects[i] / objects[i - 1], 4);
}

// Brute force: the largest power of two that divides `blocks` and whose square is <= blocks.
long ReferenceInner(long blocks) {
  long best = 1;
  for (long p = 1; p * p <= blocks; p *= 2) {
    if (blocks % p == 0) best = p;
  }
  return best;
}

bool IsPowerOfTwo(long v) { return v > 0 && (v & (v - 1)) == 0; }

TEST(ModelGrid, InnerCount3dHandPickedValues) {
  EXPECT_EQ(inner_count_3d(1), 1);
  EXPECT_EQ(inner_count_3d(2), 1);  // 2*2 > 2
  EXPECT_EQ(inner_count_3d(4), 2);
  EXPECT_EQ(inner_count_3d(8), 2);  // 4*4 > 8
  EXPECT_EQ(inner_count_3d(16), 4);
  EXPECT_EQ(inner_count_3d(1024), 32);
  EXPECT_EQ(inner_count_3d(2048), 32);
  EXPECT_EQ(inner_count_3d(12), 2);         // 4 divides 12 but 16 > 12
  EXPECT_EQ(inner_count_3d(48), 4);         // 8 divides 48 but 8*8 > 48
  EXPECT_EQ(inner_count_3d(96), 8);         // 8*8 <= 96; 16 divides 96 but 16*16 > 96
  EXPECT_EQ(inner_count_3d(7), 1);          // odd: only 1 divides
  EXPECT_EQ(inner_count_3d(6 * 1024), 64);  // 64*64 <= 6144, 128*128 > 6144
}

TEST(ModelGrid, InnerCount3dDividesIsAPowerOfTwoAndItsSquareFits) {
  for (long blocks = 1; blocks <= 70000; ++blocks) {
    const long inner = inner_count_3d(blocks);
    ASSERT_TRUE(IsPowerOfTwo(inner)) << blocks << " -> " << inner;
    ASSERT_EQ(blocks % inner, 0) << blocks << " -> " << inner;
    ASSERT_LE(inner * inner, blocks) << blocks << " -> " << inner;
    ASSERT_EQ(inner, ReferenceInner(blocks)) << blocks;  // and the largest such
  }
}

TEST(ModelGrid, InnerCount3dOfPowersOfTwoIsTheFloorOfTheSquareRoot) {
  for (int k = 0; k <= 60; ++k) {
    const long blocks = 1L << k;
    EXPECT_EQ(inner_count_3d(blocks), 1L << (k / 2)) << "2^" << k;
  }
}

}  // namespace
}  // namespace strider::model::grid
