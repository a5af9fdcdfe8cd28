// Which (type, op) pairs the GPU reduces (src/collective/reduce_kind.hpp): exactly the
// predefined ops on the predefined types the standard allows them on, each mapped to the element
// of the type's C size; everything else left to the MPI.
#include "collective/reduce_kind.hpp"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>

namespace strider::collective {
namespace {

using engine::cuda::ReduceElement;
using engine::cuda::ReduceOp;

TEST(ReduceKind, IntegersTakeEveryOpButTheLocOnes) {
  for (MPI_Op op : {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND,
                    MPI_BOR, MPI_BXOR}) {
    EXPECT_TRUE(reduce_kind(MPI_INT, op).has_value());
    EXPECT_TRUE(reduce_kind(MPI_UINT8_T, op).has_value());
  }
  EXPECT_FALSE(reduce_kind(MPI_INT, MPI_MINLOC).has_value());
  EXPECT_FALSE(reduce_kind(MPI_INT, MPI_REPLACE).has_value());
}

TEST(ReduceKind, ElementsFollowTheCSizes) {
  EXPECT_EQ(reduce_kind(MPI_LONG, MPI_SUM)->element,
            sizeof(long) == 8 ? ReduceElement::Int64 : ReduceElement::Int32);
  EXPECT_EQ(reduce_kind(MPI_UNSIGNED_SHORT, MPI_SUM)->element, ReduceElement::UInt16);
  EXPECT_EQ(reduce_kind(MPI_SIGNED_CHAR, MPI_MAX)->element, ReduceElement::Int8);
  EXPECT_EQ(reduce_kind(MPI_DOUBLE, MPI_PROD)->op, ReduceOp::Prod);
  EXPECT_EQ(reduce_kind(MPI_DOUBLE_INT, MPI_MINLOC)->element, ReduceElement::DoubleInt);
  EXPECT_EQ(reduce_kind(MPI_SHORT_INT, MPI_MAXLOC)->element, ReduceElement::ShortInt);
}

TEST(ReduceKind, OpsTheStandardForbidsAreTheMpis) {
  EXPECT_FALSE(reduce_kind(MPI_FLOAT, MPI_BAND).has_value());
  EXPECT_FALSE(reduce_kind(MPI_DOUBLE, MPI_LAND).has_value());
  EXPECT_FALSE(reduce_kind(MPI_C_BOOL, MPI_SUM).has_value());
  EXPECT_TRUE(reduce_kind(MPI_C_BOOL, MPI_LXOR).has_value());
  EXPECT_FALSE(reduce_kind(MPI_BYTE, MPI_SUM).has_value());
  EXPECT_TRUE(reduce_kind(MPI_BYTE, MPI_BXOR).has_value());
  EXPECT_FALSE(reduce_kind(MPI_2INT, MPI_SUM).has_value());
  EXPECT_FALSE(reduce_kind(MPI_DATATYPE_NULL, MPI_SUM).has_value());
  EXPECT_FALSE(reduce_kind(MPI_INT, MPI_OP_NULL).has_value());
}

TEST(ReduceKind, UnsupportedTypesAndUserOpsAreTheMpis) {
  EXPECT_FALSE(reduce_kind(MPI_LONG_DOUBLE, MPI_SUM).has_value());
  EXPECT_FALSE(reduce_kind(MPI_C_DOUBLE_COMPLEX, MPI_SUM).has_value());
  EXPECT_FALSE(reduce_kind(MPI_CHAR, MPI_SUM).has_value());
  MPI_Datatype pair = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  EXPECT_FALSE(reduce_kind(pair, MPI_SUM).has_value());
  MPI_Type_free(&pair);
  MPI_Op op = MPI_OP_NULL;
  MPI_Op_create([](void*, void*, int*, MPI_Datatype*) {}, 1, &op);
  EXPECT_FALSE(reduce_kind(MPI_INT, op).has_value());
  MPI_Op_free(&op);
}

}  // namespace
}  // namespace strider::collective

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  MPI_Init(&argc, &argv);
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}
