// The few numbers of a datatype object the cost model looks at, from hand-built canonical forms.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <vector>

#include "model/object_shape.hpp"

namespace strider::model {

// Readable failures; static and outside the unnamed namespace so that gtest finds it by ADL.
static void PrintTo(const ObjectShape& s, std::ostream* os) {
  *os << "{bytes " << s.bytes << ", block " << s.block << ", stride " << s.stride << ", dims "
      << s.dims << (s.irregular ? ", irregular}" : "}");
}

namespace {

using canon::CanonicalForm;
using canon::Dim;
using canon::StridedBlock;

CanonicalForm Strided(StridedBlock piece) {
  CanonicalForm f;
  f.size = piece.packed_bytes();
  f.pieces = {piece};
  return f;
}

CanonicalForm Pieces(std::vector<StridedBlock> pieces, canon::DimList repeat = {}) {
  CanonicalForm f;
  f.pieces = std::move(pieces);
  f.repeat = repeat;
  std::int64_t one = 0;
  for (const StridedBlock& p : f.pieces) one += p.packed_bytes();
  f.size = one * f.repetitions();
  return f;
}

ObjectShape Shape(std::int64_t bytes, std::int64_t block, std::int64_t stride, int dims,
                  bool irregular = false) {
  ObjectShape s;
  s.bytes = bytes;
  s.block = block;
  s.stride = stride;
  s.dims = dims;
  s.irregular = irregular;
  return s;
}

TEST(ModelElementShape, ContiguousBlockIsOneDim) {
  const ElementShape e = element_shape(Strided({0, 16, {}}), 16);
  EXPECT_EQ(e.size, 16);
  EXPECT_EQ(e.extent, 16);
  EXPECT_EQ(e.block, 16);
  EXPECT_EQ(e.stride, 16);  // the element spacing
  EXPECT_EQ(e.dims, 1);
  EXPECT_FALSE(e.irregular);
}

TEST(ModelObjectShape, OneContiguousElementIsContiguous) {
  const ElementShape e = element_shape(Strided({0, 16, {}}), 64);  // padded, but count 1
  EXPECT_EQ(object_shape(e, 1), Shape(16, 16, 16, 1));
}

TEST(ModelObjectShape, ContiguousElementsWithoutGapsStayContiguous) {
  const ElementShape e = element_shape(Strided({0, 16, {}}), 16);
  EXPECT_EQ(object_shape(e, 10), Shape(160, 160, 160, 1));
  EXPECT_EQ(object_shape(e, 1), Shape(16, 16, 16, 1));
}

TEST(ModelObjectShape, ContiguousElementsWithGapsBecomeTwoDimensional) {
  // A resized type: 16 bytes of data every 24 bytes.
  const ElementShape e = element_shape(Strided({0, 16, {}}), 24);
  EXPECT_EQ(object_shape(e, 10), Shape(160, 16, 24, 2));
  // Data at an offset inside the extent: the spacing is still the extent.
  const ElementShape offset = element_shape(Strided({8, 4, {}}), 16);
  EXPECT_EQ(object_shape(offset, 3), Shape(12, 4, 16, 2));
}

TEST(ModelObjectShape, NegativeExtentSpacesElementsByItsMagnitude) {
  const ElementShape e = element_shape(Strided({0, 16, {}}), -24);
  EXPECT_EQ(object_shape(e, 4), Shape(64, 16, 24, 2));
  // Backwards by exactly the size: not one forward run, so not contiguous; ratio 1.
  const ElementShape back = element_shape(Strided({0, 16, {}}), -16);
  EXPECT_EQ(object_shape(back, 4), Shape(64, 16, 16, 2));
}

TEST(ModelObjectShape, ExtentSmallerThanTheDataNeverGivesAStrideBelowTheBlock) {
  const ElementShape e = element_shape(Strided({0, 16, {}}), 8);
  EXPECT_EQ(object_shape(e, 4), Shape(64, 16, 16, 2));
}

TEST(ModelElementShape, VectorHasItsBlockStrideAndTwoDims) {
  // vector(4 blocks of 8 bytes every 32): MPI extent 3 * 32 + 8 = 104.
  const ElementShape e = element_shape(Strided({0, 8, {{4, 32}}}), 104);
  EXPECT_EQ(e.size, 32);
  EXPECT_EQ(e.extent, 104);
  EXPECT_EQ(e.block, 8);
  EXPECT_EQ(e.stride, 32);
  EXPECT_EQ(e.dims, 2);
  EXPECT_FALSE(e.irregular);
}

TEST(ModelObjectShape, VectorGainsADimWithCountAndIsCappedAtThree) {
  const ElementShape vec = element_shape(Strided({0, 8, {{4, 32}}}), 104);
  EXPECT_EQ(object_shape(vec, 1), Shape(32, 8, 32, 2));
  EXPECT_EQ(object_shape(vec, 5), Shape(160, 8, 32, 3));

  // Two strided dims already: 3 with count 1, still 3 with count > 1.
  const ElementShape sub = element_shape(Strided({0, 8, {{4, 32}, {3, 256}}}), 768);
  EXPECT_EQ(sub.dims, 3);
  EXPECT_EQ(object_shape(sub, 1), Shape(96, 8, 32, 3));
  EXPECT_EQ(object_shape(sub, 7), Shape(672, 8, 32, 3));

  // Four strided dims: element dims 5, object dims capped at 3.
  const ElementShape deep =
      element_shape(Strided({0, 2, {{2, 4}, {2, 16}, {2, 64}, {2, 256}}}), 512);
  EXPECT_EQ(deep.dims, 5);
  EXPECT_EQ(object_shape(deep, 1).dims, 3);
  EXPECT_EQ(object_shape(deep, 9).dims, 3);
}

TEST(ModelElementShape, NegativeStrideCountsByMagnitude) {
  const ElementShape e = element_shape(Strided({96, 8, {{4, -32}}}), 104);
  EXPECT_EQ(e.block, 8);
  EXPECT_EQ(e.stride, 32);
  EXPECT_EQ(e.dims, 2);
  EXPECT_EQ(object_shape(e, 2), Shape(64, 8, 32, 3));
}

TEST(ModelElementShape, StrideBelowTheBlockIsRaisedToTheBlock) {
  // Overlapping or repeated blocks (stride 4 or 0 under a block of 8): spacing at least a block.
  EXPECT_EQ(element_shape(Strided({0, 8, {{3, 4}}}), 16).stride, 8);
  EXPECT_EQ(element_shape(Strided({0, 8, {{3, 0}}}), 8).stride, 8);
}

TEST(ModelElementShape, BlockListIsIrregularWithMeanBlockAndSpacing) {
  // Blocks of 4, 12, 8, 8 bytes (4 blocks, 32 bytes) in an extent of 128.
  const CanonicalForm form = Pieces({{0, 4, {}}, {16, 12, {}}, {64, 8, {{2, 16}}}});
  ASSERT_FALSE(form.strided());
  ASSERT_EQ(form.size, 32);
  const ElementShape e = element_shape(form, 128);
  EXPECT_EQ(e.size, 32);
  EXPECT_EQ(e.block, 8);    // 32 / 4
  EXPECT_EQ(e.stride, 32);  // 128 / 4
  EXPECT_EQ(e.dims, 2);
  EXPECT_TRUE(e.irregular);
  EXPECT_EQ(object_shape(e, 1), Shape(32, 8, 32, 2, true));
  EXPECT_EQ(object_shape(e, 3), Shape(96, 8, 32, 3, true));
}

TEST(ModelElementShape, RepeatedBlockListCountsEveryRepetitionsBlocks) {
  // The same 4 blocks repeated 3 times every 128 bytes: 12 blocks, 96 bytes, extent 384.
  const CanonicalForm form = Pieces({{0, 4, {}}, {16, 12, {}}, {64, 8, {{2, 16}}}}, {{3, 128}});
  ASSERT_EQ(form.size, 96);
  const ElementShape e = element_shape(form, 384);
  EXPECT_EQ(e.block, 8);
  EXPECT_EQ(e.stride, 32);
  EXPECT_TRUE(e.irregular);
}

TEST(ModelElementShape, IrregularSpacingIsAtLeastTheMeanBlockAndIntegerDivisionRoundsDown) {
  // 3 blocks of 1, 2, 4 bytes (7 bytes): mean block 7 / 3 = 2; extent 8: 8 / 3 = 2 -> 2.
  const CanonicalForm dense = Pieces({{0, 1, {}}, {1, 2, {}}, {3, 4, {}}});
  const ElementShape e = element_shape(dense, 8);
  EXPECT_EQ(e.block, 2);
  EXPECT_EQ(e.stride, 2);
  // An extent smaller than the data (resized down): spacing raised to the mean block.
  EXPECT_EQ(element_shape(dense, 3).stride, 2);
}

TEST(ModelElementShape, EmptyTypeIsAnEmptyContiguousObject) {
  const ElementShape e = element_shape(CanonicalForm{}, 0);
  EXPECT_EQ(e.size, 0);
  EXPECT_EQ(e.dims, 1);
  EXPECT_EQ(object_shape(e, 1).bytes, 0);
  EXPECT_EQ(object_shape(e, 1).dims, 1);
  EXPECT_EQ(object_shape(e, 100).bytes, 0);
}

TEST(ModelObjectShape, BytesAreSizeTimesCountAtLargeCounts) {
  const ElementShape vec = element_shape(Strided({0, 8, {{4, 32}}}), 104);
  const std::int64_t count = std::int64_t{1} << 33;
  EXPECT_EQ(object_shape(vec, count).bytes, 32 * count);
}

}  // namespace
}  // namespace strider::model
