// Plans follow the handle's life: MPI reuses a freed handle for the next type, and the new
// layout must be used, whichever way the old type was freed. Duplicates of committed types are
// committed too and are served with the original's plan.
#include <gtest/gtest.h>

#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

// Packs `type` both ways and expects identical bytes, served by Strider.
void expect_served_and_equal(MPI_Datatype type, int count, const char* what) {
  std::mt19937_64 rng(1);
  ElementBuffer user = element_buffer(type, count, rng);
  int size = 0;
  MPI_Type_size(type, &size);
  std::vector<char> ours(size * count + 8), theirs(size * count + 8);
  const strider_stats before = stats();
  int p1 = 0, p2 = 0;
  ASSERT_EQ(MPI_Pack(user.origin(), count, type, ours.data(), static_cast<int>(ours.size()), &p1,
                     MPI_COMM_SELF),
            MPI_SUCCESS);
  PMPI_Pack(user.origin(), count, type, theirs.data(), static_cast<int>(theirs.size()), &p2,
            MPI_COMM_SELF);
  EXPECT_EQ(p1, p2) << what;
  EXPECT_EQ(ours, theirs) << what;
  EXPECT_EQ(stats().packs_host, before.packs_host + 1) << what << " was not served by Strider";
}

MPI_Datatype make(int variant) {
  MPI_Datatype t;
  switch (variant % 3) {
    case 0:
      MPI_Type_vector(3, 1, 4, MPI_INT, &t);
      break;
    case 1:
      MPI_Type_vector(2, 3, 5, MPI_DOUBLE, &t);
      break;
    default: {
      const int lengths[] = {1, 2}, disps[] = {5, 0};
      MPI_Type_indexed(2, lengths, disps, MPI_SHORT, &t);
    }
  }
  return t;
}

TEST(HandleReuse, FreedHandlesGetTheNewLayout) {
  int reused = 0;
  MPI_Datatype previous = MPI_DATATYPE_NULL;
  for (int i = 0; i < 300; ++i) {
    MPI_Datatype t = make(i);
    if (t == previous) ++reused;
    MPI_Type_commit(&t);
    expect_served_and_equal(t, 1 + i % 3, "reused handle");
    previous = t;
    MPI_Type_free(&t);
  }
  std::printf("handles reused: %d of 300\n", reused);
  EXPECT_GT(reused, 0) << "the MPI never reused a handle; the test proves nothing";
}

TEST(HandleReuse, FreeThroughPmpiStillInvalidates) {
  // A free that bypasses MPI_Type_free (a Fortran binding, another tool) must not leave a stale
  // plan: the attribute delete callback drops it.
  for (int i = 0; i < 100; ++i) {
    MPI_Datatype t = make(i);
    MPI_Type_commit(&t);
    expect_served_and_equal(t, 2, "before PMPI free");
    PMPI_Type_free(&t);
    MPI_Datatype u = make(i + 1);
    MPI_Type_commit(&u);
    expect_served_and_equal(u, 2, "after PMPI free");
    MPI_Type_free(&u);
  }
}

TEST(HandleReuse, DuplicatesOfCommittedTypes) {
  MPI_Datatype t = make(1), dup;
  MPI_Type_commit(&t);
  MPI_Type_dup(t, &dup);
  expect_served_and_equal(dup, 3, "dup");
  MPI_Type_free(&t);
  expect_served_and_equal(dup, 2, "dup after the original was freed");
  MPI_Type_free(&dup);
}

TEST(HandleReuse, ChildrenFreedWhileParentsLive) {
  MPI_Datatype child = make(0), parent;
  MPI_Type_commit(&child);
  MPI_Type_contiguous(2, child, &parent);
  MPI_Type_commit(&parent);
  MPI_Type_free(&child);
  expect_served_and_equal(parent, 2, "parent of a freed child");
  MPI_Type_free(&parent);
}

}  // namespace
}  // namespace strider::testing
