// MPI_Pack / MPI_Unpack semantics kept by the interposer: position in/out, truncation reported
// as MPI_ERR_TRUNCATE through the communicator's error handler with nothing written, count 0,
// and bad input answered as the system MPI answers it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

class Semantics : public ::testing::Test {
 protected:
  void SetUp() override {
    MPI_Type_vector(4, 2, 3, MPI_INT, &vec_);
    MPI_Type_commit(&vec_);
    std::iota(data_.begin(), data_.end(), 0);
  }
  void TearDown() override { MPI_Type_free(&vec_); }
  MPI_Datatype vec_ = MPI_DATATYPE_NULL;
  std::vector<int> data_ = std::vector<int>(64);
};

TEST_F(Semantics, PositionAdvancesAndPacksAppend) {
  const strider_stats before = stats();
  std::vector<char> out(200, 'x');
  int position = 3;
  ASSERT_EQ(MPI_Pack(data_.data(), 1, vec_, out.data(), 200, &position, MPI_COMM_WORLD),
            MPI_SUCCESS);
  EXPECT_EQ(position, 3 + 32);
  ASSERT_EQ(MPI_Pack(data_.data(), 2, vec_, out.data(), 200, &position, MPI_COMM_WORLD),
            MPI_SUCCESS);
  EXPECT_EQ(position, 3 + 32 + 64);
  EXPECT_EQ(out[0], 'x');
  EXPECT_EQ(out[position], 'x');
  int first[2];
  std::memcpy(first, out.data() + 3, sizeof first);
  EXPECT_EQ(first[0], 0);
  EXPECT_EQ(first[1], 1);
  EXPECT_EQ(stats().packs_host, before.packs_host + 2);

  std::vector<int> back(64, -1);
  int in_position = 3;
  ASSERT_EQ(MPI_Unpack(out.data(), position, &in_position, back.data(), 1, vec_, MPI_COMM_WORLD),
            MPI_SUCCESS);
  EXPECT_EQ(in_position, 35);
  EXPECT_EQ(back[0], 0);
  EXPECT_EQ(back[2], -1);  // the gap stays untouched
  EXPECT_EQ(back[3], 3);
}

TEST_F(Semantics, TruncationIsReportedAndWritesNothing) {
  std::vector<char> out(40, 'x');
  int position = 10;
  const int rc = MPI_Pack(data_.data(), 1, vec_, out.data(), 40, &position, MPI_COMM_WORLD);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(rc, &error_class);
  EXPECT_EQ(error_class, MPI_ERR_TRUNCATE);
  EXPECT_EQ(position, 10);
  EXPECT_EQ(std::count(out.begin(), out.end(), 'x'), 40);

  std::vector<int> back(64, -1);
  position = 0;
  const int rc2 = MPI_Unpack(out.data(), 31, &position, back.data(), 1, vec_, MPI_COMM_WORLD);
  MPI_Error_class(rc2, &error_class);
  EXPECT_EQ(error_class, MPI_ERR_TRUNCATE);
  EXPECT_EQ(position, 0);
  EXPECT_EQ(std::count(back.begin(), back.end(), -1), 64);
}

int g_handler_calls = 0;
int g_handler_code = MPI_SUCCESS;
void record_error(MPI_Comm*, int* code, ...) {
  ++g_handler_calls;
  g_handler_code = *code;
}

TEST_F(Semantics, TruncationGoesThroughTheCommunicatorsHandler) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Errhandler handler;
  MPI_Comm_create_errhandler(&record_error, &handler);
  MPI_Comm_set_errhandler(comm, handler);
  g_handler_calls = 0;
  std::vector<char> out(8);
  int position = 0;
  MPI_Pack(data_.data(), 1, vec_, out.data(), 8, &position, comm);
  EXPECT_EQ(g_handler_calls, 1);
  int error_class = MPI_SUCCESS;
  MPI_Error_class(g_handler_code, &error_class);
  EXPECT_EQ(error_class, MPI_ERR_TRUNCATE);
  MPI_Errhandler_free(&handler);
  MPI_Comm_free(&comm);
}

TEST_F(Semantics, CountZeroChangesNothing) {
  std::vector<char> out(8, 'x');
  int position = 5;
  EXPECT_EQ(MPI_Pack(data_.data(), 0, vec_, out.data(), 8, &position, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(position, 5);
  EXPECT_EQ(MPI_Unpack(out.data(), 8, &position, data_.data(), 0, vec_, MPI_COMM_WORLD),
            MPI_SUCCESS);
  EXPECT_EQ(position, 5);
  EXPECT_EQ(std::count(out.begin(), out.end(), 'x'), 8);
}

// Bad input: Strider's answer must carry the error class the system MPI gives.
int error_class_of(int rc) {
  int c = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c);
  return c;
}

TEST_F(Semantics, BadInputGetsTheSystemMpisErrorClass) {
  std::vector<char> out(256);
  MPI_Datatype uncommitted;
  MPI_Type_contiguous(3, MPI_INT, &uncommitted);
  struct Case {
    const char* what;
    int count;
    MPI_Datatype type;
    int outsize;
    MPI_Comm comm;
    bool null_packed;
    bool null_position;
  };
  std::vector<Case> cases = {
      {"null datatype", 1, MPI_DATATYPE_NULL, 256, MPI_COMM_WORLD, false, false},
      {"uncommitted datatype", 1, uncommitted, 256, MPI_COMM_WORLD, false, false},
      {"negative count", -1, vec_, 256, MPI_COMM_WORLD, false, false},
      {"null communicator", 1, vec_, 256, MPI_COMM_NULL, false, false},
      {"negative buffer size", 1, vec_, -5, MPI_COMM_WORLD, false, false},
      {"null position", 1, vec_, 256, MPI_COMM_WORLD, false, true},
  };
  // MPICH itself crashes on a null pack buffer: nothing to compare there.
  if (!on_mpich())
    cases.push_back({"null packed buffer", 1, vec_, 256, MPI_COMM_WORLD, true, false});
  for (const Case& c : cases) {
    int p1 = 0, p2 = 0;
    char* packed = c.null_packed ? nullptr : out.data();
    int* pos1 = c.null_position ? nullptr : &p1;
    int* pos2 = c.null_position ? nullptr : &p2;
    const int ours = MPI_Pack(data_.data(), c.count, c.type, packed, c.outsize, pos1, c.comm);
    const int theirs = PMPI_Pack(data_.data(), c.count, c.type, packed, c.outsize, pos2, c.comm);
    EXPECT_EQ(error_class_of(ours), error_class_of(theirs)) << c.what;
    EXPECT_NE(ours, MPI_SUCCESS) << c.what;
    EXPECT_EQ(p1, p2) << c.what;
    p1 = p2 = 0;
    const int ours_u = MPI_Unpack(packed, c.outsize, pos1, data_.data(), c.count, c.type, c.comm);
    const int theirs_u =
        PMPI_Unpack(packed, c.outsize, pos2, data_.data(), c.count, c.type, c.comm);
    EXPECT_EQ(error_class_of(ours_u), error_class_of(theirs_u)) << c.what;
  }
  MPI_Type_free(&uncommitted);
}

TEST_F(Semantics, PredefinedTypesAreServedToo) {
  const strider_stats before = stats();
  std::vector<double> values{1.5, 2.5, 3.5};
  std::vector<char> out(64);
  int position = 0;
  ASSERT_EQ(MPI_Pack(values.data(), 3, MPI_DOUBLE, out.data(), 64, &position, MPI_COMM_WORLD),
            MPI_SUCCESS);
  EXPECT_EQ(position, 24);
  EXPECT_EQ(stats().packs_host, before.packs_host + 1);
  // MPI_SHORT_INT has a hole between the short and the int.
  struct {
    short s;
    int i;
  } pairs[2] = {{1, 2}, {3, 4}};
  std::vector<char> ours(32), theirs(32);
  int p1 = 0, p2 = 0;
  MPI_Pack(pairs, 2, MPI_SHORT_INT, ours.data(), 32, &p1, MPI_COMM_WORLD);
  PMPI_Pack(pairs, 2, MPI_SHORT_INT, theirs.data(), 32, &p2, MPI_COMM_WORLD);
  EXPECT_EQ(p1, p2);
  EXPECT_EQ(ours, theirs);
}

}  // namespace
}  // namespace strider::testing

namespace strider::testing {
namespace {

// A derived type over a parameterized F90 type: the decoder must not free the F90 child that
// MPI_Type_get_contents hands back (it is predefined; Open MPI raises an error otherwise).
TEST(Decoding, TypesOverF90TypesAreServed) {
  MPI_Datatype real, vec;
  ASSERT_EQ(MPI_Type_create_f90_real(15, MPI_UNDEFINED, &real), MPI_SUCCESS);
  MPI_Type_vector(3, 1, 2, real, &vec);
  ASSERT_EQ(MPI_Type_commit(&vec), MPI_SUCCESS);
  std::vector<double> data{1, 2, 3, 4, 5, 6};
  std::vector<char> ours(64), theirs(64);
  int p1 = 0, p2 = 0;
  const strider_stats before = stats();
  ASSERT_EQ(MPI_Pack(data.data(), 1, vec, ours.data(), 64, &p1, MPI_COMM_WORLD), MPI_SUCCESS);
  PMPI_Pack(data.data(), 1, vec, theirs.data(), 64, &p2, MPI_COMM_WORLD);
  EXPECT_EQ(p1, p2);
  EXPECT_EQ(ours, theirs);
  EXPECT_EQ(stats().packs_host, before.packs_host + 1);
  MPI_Type_free(&vec);
}

#if MPI_VERSION >= 4
// MPI-4 large-count constructors (as mpi4py builds its types): decoded like the classic ones, so
// Strider's own engine packs them, byte for byte as the MPI does.
TEST(Decoding, LargeCountTypesArePackedByStrider) {
  MPI_Datatype t;
  ASSERT_EQ(MPI_Type_vector_c(4, 2, 3, MPI_INT, &t), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&t), MPI_SUCCESS);
  std::vector<int> data(16);
  std::iota(data.begin(), data.end(), 0);
  std::vector<char> ours(64), theirs(64);
  int p1 = 0, p2 = 0;
  const strider_stats before = stats();
  ASSERT_EQ(MPI_Pack(data.data(), 1, t, ours.data(), 64, &p1, MPI_COMM_WORLD), MPI_SUCCESS);
  PMPI_Pack(data.data(), 1, t, theirs.data(), 64, &p2, MPI_COMM_WORLD);
  EXPECT_EQ(p1, p2);
  EXPECT_EQ(ours, theirs);
  EXPECT_EQ(stats().packs_host, before.packs_host + 1);
  EXPECT_EQ(stats().packs_forwarded, before.packs_forwarded);
  MPI_Type_free(&t);
}
#endif

}  // namespace
}  // namespace strider::testing
