// The decoder on real MPI handles (no interposition): equivalent constructions reach one
// canonical form, predefined types with holes are discovered, bounds are the MPI's.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "plan/plan.hpp"
#include "typespec/type_spec.hpp"

namespace strider {
namespace {

canon::CanonicalForm form_of(const std::string& text) {
  MPI_Datatype t = typespec::build_type(text);
  MPI_Type_commit(&t);
  auto plan = plan::build_plan(t);
  if (!typespec::is_named(t)) MPI_Type_free(&t);
  EXPECT_TRUE(plan->supported) << text << ": " << plan->reason;
  return plan->form;
}

TEST(Decode, ThreeConstructionsOfABox) {
  const auto a = form_of("subarray(C,[1024,512,256],[47,13,100],[0,0,0],byte)");
  const auto b = form_of("hvector(47,1,131072,subarray(C,[512,256],[13,100],[0,0],byte))");
  const auto c = form_of("hvector(47,1,131072,hvector(13,1,256,vector(100,1,1,byte)))");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
  ASSERT_TRUE(a.strided());
  EXPECT_EQ(a.pieces.front(), (canon::StridedBlock{0, 100, {{13, 256}, {47, 131072}}}));
}

TEST(Decode, FloatEqualsFourBytes) {
  const auto f = form_of("float");
  EXPECT_EQ(f, form_of("contiguous(4,byte)"));
  EXPECT_EQ(f, form_of("hindexed([1,1,1,1],[0,1,2,3],byte)"));
  EXPECT_EQ(f, form_of("indexed_block(1,[0,1,2,3],char)"));
}

TEST(Decode, PairTypesKeepTheirHoles) {
  const auto short_int = form_of("short_int");
  ASSERT_EQ(short_int.pieces.size(), 2u);
  EXPECT_EQ(short_int.pieces[0], (canon::StridedBlock{0, sizeof(short), {}}));
  EXPECT_EQ(short_int.pieces[1].block, static_cast<std::int64_t>(sizeof(int)));
  EXPECT_TRUE(form_of("2int").strided());
  EXPECT_EQ(form_of("float_int").size, 8);
}

TEST(Decode, EveryNamedTypeIsCovered) {
  for (const auto& named : typespec::named_types()) {
    auto plan = plan::build_plan(named.type);
    int size = 0;
    MPI_Type_size(named.type, &size);
    EXPECT_TRUE(plan->supported) << named.name << ": " << plan->reason;
    EXPECT_EQ(plan->form.size, size) << named.name;
  }
}

TEST(Decode, BoundsAreTheMpisOwn) {
  for (const char* text : {"resized(-8,40,vector(3,1,2,int))", "hindexed([2,1],[-16,8],double)",
                           "struct([1,2],[-3,5],[char,short])", "subarray(F,[4,5],[1,2],[3,1],int)",
                           "darray(4,3,C,[7,5],[cyclic,block],[2,default],[2,2],double)"}) {
    MPI_Datatype t = typespec::build_type(text);
    MPI_Type_commit(&t);
    auto plan = plan::build_plan(t);
    MPI_Aint lb, extent, tlb, textent;
    MPI_Type_get_extent(t, &lb, &extent);
    MPI_Type_get_true_extent(t, &tlb, &textent);
    EXPECT_TRUE(plan->supported) << text;
    EXPECT_EQ(plan->bounds.lb, lb) << text;
    EXPECT_EQ(plan->bounds.extent, extent) << text;
    EXPECT_EQ(plan->bounds.true_lb, tlb) << text;
    EXPECT_EQ(plan->bounds.true_extent, textent) << text;
    MPI_Type_free(&t);
  }
}

TEST(Decode, ExplanationRecordsTheSteps) {
  MPI_Datatype t = typespec::build_type("vector(8,2,4,int)");
  MPI_Type_commit(&t);
  plan::Explanation explanation;
  auto plan = plan::build_plan(t, &explanation);
  const std::string text = plan::describe(*plan, &explanation);
  EXPECT_NE(text.find("dense-folding"), std::string::npos) << text;
  EXPECT_NE(text.find("canonical: strided"), std::string::npos) << text;
  MPI_Type_free(&t);
}

// `n` one-byte blocks, two bytes apart (runs that would collapse: the cap counts entries, not
// pieces, so that it is checked before the work).
MPI_Datatype byte_blocks(int n) {
  std::vector<int> lengths(static_cast<std::size_t>(n), 1);
  std::vector<MPI_Aint> displs(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) displs[static_cast<std::size_t>(i)] = 2 * MPI_Aint{i};
  MPI_Datatype t;
  MPI_Type_create_hindexed(n, lengths.data(), displs.data(), MPI_BYTE, &t);
  return t;
}

TEST(Decode, BlockListEntriesAreCapped) {
  MPI_Datatype t = byte_blocks(11);
  MPI_Type_commit(&t);
  const decode::Bounds b = decode::bounds_of(t);
  EXPECT_THROW(decode::decode(t, b, 10), decode::Unsupported);
  EXPECT_NO_THROW(decode::decode(t, b, 11));
  MPI_Type_free(&t);
  // The entries of a struct and of its members count together.
  MPI_Datatype half = byte_blocks(5), s;
  const int ones[2] = {1, 1};
  const MPI_Aint at[2] = {0, 100};
  const MPI_Datatype halves[2] = {half, half};
  MPI_Type_create_struct(2, ones, at, halves, &s);
  MPI_Type_commit(&s);
  EXPECT_THROW(decode::decode(s, decode::bounds_of(s), 11), decode::Unsupported);
  EXPECT_NO_THROW(decode::decode(s, decode::bounds_of(s), 12));
  MPI_Type_free(&s);
  MPI_Type_free(&half);
}

TEST(Decode, TypesOverTheEntryCapGetNoPlan) {
  const int cap = static_cast<int>(decode::kMaxListEntries);
  MPI_Datatype over = byte_blocks(cap + 1), at_cap = byte_blocks(cap);
  MPI_Type_commit(&over);
  MPI_Type_commit(&at_cap);
  const auto refused = plan::build_plan(over);
  EXPECT_FALSE(refused->supported);
  EXPECT_NE(refused->reason.find("block-list entries"), std::string::npos) << refused->reason;
  const auto planned = plan::build_plan(at_cap);
  EXPECT_TRUE(planned->supported) << planned->reason;
  EXPECT_TRUE(planned->form.strided());
  MPI_Type_free(&over);
  MPI_Type_free(&at_cap);
}

}  // namespace
}  // namespace strider

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}

#include "plan/host_policy.hpp"
#include "runtime/mpi_library.hpp"

namespace strider {
namespace {

bool wins(const std::string& text) {
  MPI_Datatype t = typespec::build_type(text);
  MPI_Type_commit(&t);
  const bool w = plan::host_engine_wins(*plan::build_plan(t));
  if (!typespec::is_named(t)) MPI_Type_free(&t);
  return w;
}

#if MPI_VERSION >= 4
// A type built by a large-count constructor (as mpi4py builds them) plans to the same canonical
// form as the classic construction of the same type.
canon::CanonicalForm form_of_type(MPI_Datatype t) {
  MPI_Type_commit(&t);
  auto plan = plan::build_plan(t);
  MPI_Type_free(&t);
  EXPECT_TRUE(plan->supported) << plan->reason;
  return plan->form;
}

TEST(Decode, LargeCountConstructorsDecodeAsTheClassicOnes) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  MPI_Type_contiguous_c(5, MPI_INT, &t);
  EXPECT_EQ(form_of_type(t), form_of("contiguous(5,int)"));
  MPI_Type_vector_c(3, 2, 7, MPI_INT, &t);
  EXPECT_EQ(form_of_type(t), form_of("vector(3,2,7,int)"));
  MPI_Type_create_hvector_c(3, 2, 40, MPI_INT, &t);
  EXPECT_EQ(form_of_type(t), form_of("hvector(3,2,40,int)"));
  const MPI_Count bl[3] = {1, 2, 3}, di[3] = {0, 5, 11}, hd[3] = {0, 40, 96};
  MPI_Type_indexed_c(3, bl, di, MPI_INT, &t);
  EXPECT_EQ(form_of_type(t), form_of("indexed([1,2,3],[0,5,11],int)"));
  MPI_Type_create_hindexed_c(3, bl, hd, MPI_INT, &t);
  EXPECT_EQ(form_of_type(t), form_of("hindexed([1,2,3],[0,40,96],int)"));
  MPI_Type_create_indexed_block_c(3, 2, di, MPI_INT, &t);
  EXPECT_EQ(form_of_type(t), form_of("indexed_block(2,[0,5,11],int)"));
  MPI_Type_create_hindexed_block_c(3, 2, hd, MPI_INT, &t);
  EXPECT_EQ(form_of_type(t), form_of("hindexed_block(2,[0,40,96],int)"));
  MPI_Datatype members[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT};
  MPI_Type_create_struct_c(3, bl, hd, members, &t);
  EXPECT_EQ(form_of_type(t), form_of("struct([1,2,3],[0,40,96],[int,double,short])"));
  const MPI_Count sizes[3] = {10, 12, 7}, subsizes[3] = {3, 4, 5}, starts[3] = {1, 2, 0};
  MPI_Type_create_subarray_c(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_DOUBLE, &t);
  EXPECT_EQ(form_of_type(t), form_of("subarray(C,[10,12,7],[3,4,5],[1,2,0],double)"));
  MPI_Type_create_subarray_c(3, sizes, subsizes, starts, MPI_ORDER_FORTRAN, MPI_DOUBLE, &t);
  EXPECT_EQ(form_of_type(t), form_of("subarray(F,[10,12,7],[3,4,5],[1,2,0],double)"));
  const MPI_Count gsizes[2] = {8, 6};
  const int distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
  const int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, psizes[2] = {2, 1};
  MPI_Type_create_darray_c(2, 1, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_FORTRAN, MPI_INT,
                           &t);
  MPI_Datatype classic = MPI_DATATYPE_NULL;
  const int igsizes[2] = {8, 6};
  MPI_Type_create_darray(2, 1, 2, igsizes, distribs, dargs, psizes, MPI_ORDER_FORTRAN, MPI_INT,
                         &classic);
  EXPECT_EQ(form_of_type(t), form_of_type(classic));
  MPI_Datatype vec = MPI_DATATYPE_NULL;
  MPI_Type_vector_c(3, 1, 2, MPI_INT, &vec);
  MPI_Type_create_resized_c(vec, -8, 40, &t);
  MPI_Type_free(&vec);
  MPI_Type_commit(&t);
  auto plan = plan::build_plan(t);
  MPI_Type_free(&t);
  ASSERT_TRUE(plan->supported) << plan->reason;
  EXPECT_EQ(plan->bounds.lb, -8);
  EXPECT_EQ(plan->bounds.extent, 40);
  EXPECT_EQ(plan->form, form_of("resized(-8,40,vector(3,1,2,int))"));
}

// Nested large-count types, and a count past INT_MAX in the type (never packed whole here).
TEST(Decode, NestedLargeCountTypes) {
  MPI_Datatype inner = MPI_DATATYPE_NULL, t = MPI_DATATYPE_NULL;
  MPI_Type_vector_c(4, 1, 3, MPI_FLOAT, &inner);
  MPI_Type_create_hvector_c(5, 2, 100, inner, &t);
  MPI_Type_free(&inner);
  EXPECT_EQ(form_of_type(t), form_of("hvector(5,2,100,vector(4,1,3,float))"));
  MPI_Type_contiguous_c(std::int64_t{3} << 30, MPI_BYTE, &t);
  MPI_Type_commit(&t);
  auto plan = plan::build_plan(t);
  MPI_Type_free(&t);
  EXPECT_TRUE(plan->supported) << plan->reason;
  EXPECT_EQ(plan->bounds.size, std::int64_t{3} << 30);
}
#endif

TEST(HostPolicy, FollowsTheMeasuredBlockSizes) {
  EXPECT_TRUE(wins("vector(1024,1,512,byte)"));
  EXPECT_TRUE(wins("vector(1024,32,512,byte)"));
  EXPECT_FALSE(wins("contiguous(1024,double)"));  // one dense block: the MPI's memcpy
  EXPECT_FALSE(wins("vector(1024,512,1024,byte)"));
  // Blocks of 4 and 1 bytes repeated 1000 times: the mean counts every repetition.
  EXPECT_TRUE(wins("contiguous(1000,struct([1,1],[0,8],[int,char]))"));
  // Chosen at run time from the MPI the process runs on.
  const bool mpich = runtime::mpi_library().family == runtime::MpiFamily::Mpich;
  EXPECT_EQ(wins("vector(1024,128,512,byte)"), mpich);
}

// The MPI asked at run time is the one this test was built with (the build's ABI).
TEST(MpiLibrary, TheProcessRunsOnTheBuildsMpi) {
  const runtime::MpiLibrary& m = runtime::mpi_library();
  EXPECT_GT(m.major, 0) << m.name;
#if defined(OPEN_MPI)
  EXPECT_EQ(m.family, runtime::MpiFamily::OpenMpi) << m.name;
  EXPECT_STREQ(runtime::built_abi(), "Open MPI");
#elif defined(MPICH_VERSION) && !defined(MPI_ABI_VERSION)
  EXPECT_EQ(m.family, runtime::MpiFamily::Mpich) << m.name;
  EXPECT_STREQ(runtime::built_abi(), "MPICH");
#endif
}

}  // namespace
}  // namespace strider
