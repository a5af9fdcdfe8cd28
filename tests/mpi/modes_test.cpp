// How Strider is attached: preloaded, linked before the MPI, or disabled. The same program
// checks the pack result and what Strider reports, against the mode CTest says it runs in
// (STRIDER_TEST_EXPECT=served|passthrough).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

TEST(Modes, PackIsCorrectAndServedAsConfigured) {
  const char* expect = std::getenv("STRIDER_TEST_EXPECT");
  ASSERT_NE(expect, nullptr) << "set STRIDER_TEST_EXPECT";
  ASSERT_TRUE(strider_loaded()) << "libstrider is neither preloaded nor linked";
  MPI_Datatype t;
  MPI_Type_vector(16, 3, 7, MPI_FLOAT, &t);
  MPI_Type_commit(&t);
  std::mt19937_64 rng(3);
  ElementBuffer user = element_buffer(t, 2, rng);
  std::vector<char> ours(400), theirs(400);
  int p1 = 0, p2 = 0;
  const strider_stats before = stats();
  MPI_Pack(user.origin(), 2, t, ours.data(), 400, &p1, MPI_COMM_WORLD);
  PMPI_Pack(user.origin(), 2, t, theirs.data(), 400, &p2, MPI_COMM_WORLD);
  const strider_stats after = stats();
  EXPECT_EQ(p1, p2);
  EXPECT_EQ(ours, theirs);
  if (std::strcmp(expect, "served") == 0) {
    EXPECT_EQ(after.packs_host, before.packs_host + 1);
    EXPECT_GE(after.types_planned, 1u);
  } else {
    // STRIDER_DISABLE=1: nothing decoded, nothing served, nothing even counted.
    EXPECT_EQ(after.packs_host, 0u);
    EXPECT_EQ(after.types_planned, 0u);
    EXPECT_EQ(after.packs_forwarded, 0u);
  }
  MPI_Type_free(&t);
}

}  // namespace
}  // namespace strider::testing
