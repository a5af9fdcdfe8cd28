// Strider's MPI_Pack / MPI_Unpack (host engine forced on) against the system MPI's own
// PMPI_Pack / PMPI_Unpack on random nested datatypes: same bytes, same position, and the same
// untouched bytes around them. Each rank checks its own share of types with its own seed.
//
// Where the system MPI's bytes differ from Strider's, a third oracle decides: the typemap that
// typespec's independent model of the MPI standard gives. Strider must match it; such cases
// are counted as deviations of the system MPI (Open MPI 4.1 packs a vector whose stride is
// minus its block length as if the stride were positive).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "mpi_test_support.hpp"
#include "typespec/random_type.hpp"
#include "typespec/type_spec.hpp"

namespace strider::testing {
namespace {

struct Outcome {
  bool handled = false;       // Strider's host engine served both calls
  bool mpi_deviates = false;  // the system MPI disagreed with the standard's typemap
};

// Packs and unpacks `count` elements at a non-zero position both ways and compares.
Outcome check_type(const std::string& text, MPI_Datatype type, int count, std::mt19937_64& rng) {
  Outcome outcome;
  int size = 0;
  MPI_Type_size(type, &size);
  const int packed_bytes = size * count;
  const int position0 = static_cast<int>(rng() % 16);
  const int outsize = position0 + packed_bytes + static_cast<int>(rng() % 8);

  ElementBuffer user = element_buffer(type, count, rng);
  std::vector<unsigned char> ours(outsize + 32), theirs;
  for (auto& b : ours) b = static_cast<unsigned char>(rng());
  theirs = ours;
  const std::vector<unsigned char> before_pack = ours;

  const strider_stats before = stats();
  int pos_ours = position0, pos_theirs = position0;
  const int rc_ours =
      MPI_Pack(user.origin(), count, type, ours.data(), outsize, &pos_ours, MPI_COMM_SELF);
  const int rc_theirs =
      PMPI_Pack(user.origin(), count, type, theirs.data(), outsize, &pos_theirs, MPI_COMM_SELF);
  EXPECT_EQ(rc_ours, MPI_SUCCESS) << text;
  EXPECT_EQ(rc_theirs, MPI_SUCCESS) << text;
  EXPECT_EQ(pos_ours, pos_theirs) << text << " count " << count;
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(type, &lb, &extent);
  const auto layout = typespec::layout_of(typespec::parse(text));
  if (ours != theirs) {
    // Ask the standard: the reference bytes, placed as both engines place them.
    if (!layout) {
      ADD_FAILURE() << "no reference layout for " << text;
      return outcome;
    }
    // Built from the bytes before the call, so a stray write anywhere shows.
    std::vector<unsigned char> expected = before_pack;
    const auto ref = reference_pack(*layout, extent, count, user.origin());
    std::copy(ref.begin(), ref.end(), expected.begin() + position0);
    std::vector<unsigned char> mpi_expected = theirs;
    std::copy(ref.begin(), ref.end(), mpi_expected.begin() + position0);
    EXPECT_TRUE(ours == expected) << "pack differs from MPI and standard: " << text << " count "
                                  << count;
    EXPECT_FALSE(theirs == mpi_expected) << "pack differs from the MPI: " << text;
    outcome.mpi_deviates = true;
  }

  // Unpack random packed bytes into two copies of a random buffer.
  std::vector<unsigned char> packed(outsize);
  for (auto& b : packed) b = static_cast<unsigned char>(rng());
  ElementBuffer target_ours = element_buffer(type, count, rng);
  ElementBuffer target_theirs = target_ours;
  const ElementBuffer before_unpack = target_ours;
  pos_ours = pos_theirs = position0;
  EXPECT_EQ(MPI_Unpack(packed.data(), outsize, &pos_ours, target_ours.origin(), count, type,
                       MPI_COMM_SELF),
            MPI_SUCCESS)
      << text;
  EXPECT_EQ(PMPI_Unpack(packed.data(), outsize, &pos_theirs, target_theirs.origin(), count, type,
                        MPI_COMM_SELF),
            MPI_SUCCESS)
      << text;
  EXPECT_EQ(pos_ours, pos_theirs) << text;
  if (target_ours.bytes != target_theirs.bytes) {
    if (!layout) {
      ADD_FAILURE() << "no reference layout for " << text;
      return outcome;
    }
    // The standard's answer applied to the bytes before the call.
    ElementBuffer fresh = before_unpack;
    reference_unpack(*layout, extent, count, packed.data() + position0, fresh.origin());
    EXPECT_TRUE(fresh.bytes == target_ours.bytes)
        << "unpack differs from MPI and standard: " << text << " count " << count;
    outcome.mpi_deviates = true;
  }

  const strider_stats after = stats();
  outcome.handled =
      after.packs_host == before.packs_host + 1 && after.unpacks_host == before.unpacks_host + 1;
  return outcome;
}

TEST(PackDifferential, RandomTypesMatchTheSystemMpi) {
  const long types = env_long("STRIDER_TEST_TYPES", 6000);
  const std::uint64_t seed = static_cast<std::uint64_t>(env_long("STRIDER_TEST_SEED", 20261121)) +
                             1000003ull * world_rank();
  std::printf("[rank %d] seed %llu, %ld types (reproduce: STRIDER_TEST_SEED=%ld)\n", world_rank(),
              static_cast<unsigned long long>(seed), types,
              env_long("STRIDER_TEST_SEED", 20261121));
  std::mt19937_64 rng(seed);
  typespec::RandomTypeOptions options;
  long handled = 0, checked = 0, deviations = 0;
  for (long t = 0; t < types && !HasFailure(); ++t) {
    const std::string text = typespec::random_type(rng, options);
    MPI_Datatype type = typespec::build_type(text);
    ASSERT_EQ(MPI_Type_commit(&type), MPI_SUCCESS) << text;
    const int count = 1 + static_cast<int>(rng() % 8);
    int size = 0;
    MPI_Type_size(type, &size);
    if (size > 0) {
      const Outcome outcome = check_type(text, type, count, rng);
      const bool ok = outcome.handled;
      handled += ok;
      if (outcome.mpi_deviates && ++deviations <= 3) {
        std::printf("[rank %d] system MPI deviates from the standard's typemap: %s\n", world_rank(),
                    text.c_str());
      }
      ++checked;
      if (!ok && checked - handled <= 10) {
        ADD_FAILURE() << "left to the MPI: " << text << "\n" << describe(type);
      }
    }
    if (!typespec::is_named(type)) MPI_Type_free(&type);
  }
  long totals[3] = {checked, handled, deviations}, sums[3] = {0, 0, 0};
  MPI_Allreduce(totals, sums, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank() == 0) {
    std::printf(
        "random types checked: %ld on %d ranks; served by Strider's engine: %ld; "
        "system MPI deviating from the standard (Strider matched the standard): %ld\n",
        sums[0], world_size(), sums[1], sums[2]);
  }
  // Every generated type is one Strider claims to cover; a fallback here is a coverage bug.
  EXPECT_EQ(handled, checked);
}

}  // namespace
}  // namespace strider::testing

namespace strider::testing {
namespace {

// Types on which a system MPI is known to deviate from the standard's typemap. Strider must
// give the standard's bytes; whether the system MPI agrees is printed, not asserted.
TEST(KnownMpiDeviations, StriderFollowsTheStandard) {
  const char* const types[] = {
      "vector(4,1,-1,byte)",        // Open MPI 4.1: byte stride -1 packed forwards
      "hvector(3,1,-1,int8_t)",     // same, as hvector
      "vector(2,1,-1,c_bool)",      // same
      "contiguous(3,long_double)",  // MPICH 4.0: only the 10 value bytes are copied
      "struct([1,1],[0,32],[long_double,int])",
  };
  for (const char* text : types) {
    MPI_Datatype type = typespec::build_type(text);
    ASSERT_EQ(MPI_Type_commit(&type), MPI_SUCCESS);
    const auto layout = typespec::layout_of(typespec::parse(text));
    ASSERT_TRUE(layout.has_value()) << text;
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_get_extent(type, &lb, &extent);
    int size = 0;
    MPI_Type_size(type, &size);
    std::mt19937_64 rng(5);
    for (int count = 1; count <= 3; ++count) {
      ElementBuffer user = element_buffer(type, count, rng);
      std::vector<unsigned char> ours(size * count), theirs(size * count);
      int p1 = 0, p2 = 0;
      const strider_stats before = stats();
      MPI_Pack(user.origin(), count, type, ours.data(), size * count, &p1, MPI_COMM_SELF);
      EXPECT_EQ(stats().packs_host, before.packs_host + 1) << text;
      PMPI_Pack(user.origin(), count, type, theirs.data(), size * count, &p2, MPI_COMM_SELF);
      EXPECT_EQ(ours, reference_pack(*layout, extent, count, user.origin())) << text;
      if (count == 1 && world_rank() == 0) {
        std::printf("%-42s system MPI %s the standard\n", text,
                    ours == theirs ? "agrees with" : "DEVIATES from");
      }
      // Unpack restores exactly the typemap's bytes.
      ElementBuffer back = element_buffer(type, count, rng);
      ElementBuffer want = back;
      int p3 = 0;
      MPI_Unpack(ours.data(), size * count, &p3, back.origin(), count, type, MPI_COMM_SELF);
      reference_unpack(*layout, extent, count, ours.data(), want.origin());
      EXPECT_TRUE(back.bytes == want.bytes) << text;
    }
    MPI_Type_free(&type);
  }
}

// A type over Strider's cap on block-list entries is left to the MPI: no plan, and packing it
// gives the MPI's own bytes.
TEST(EntryCap, TypesOverTheCapAreLeftToTheMpi) {
  const int n = (1 << 20) + 1;
  std::vector<int> lengths(static_cast<std::size_t>(n));
  std::vector<MPI_Aint> displs(static_cast<std::size_t>(n));
  std::mt19937_64 rng(7);
  MPI_Aint at = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    lengths[i] = 1 + static_cast<int>(rng() % 3);
    displs[i] = at;
    at += lengths[i] + static_cast<MPI_Aint>(rng() % 4);
  }
  MPI_Datatype type;
  ASSERT_EQ(MPI_Type_create_hindexed(n, lengths.data(), displs.data(), MPI_BYTE, &type),
            MPI_SUCCESS);
  const strider_stats before = stats();
  ASSERT_EQ(MPI_Type_commit(&type), MPI_SUCCESS);
  const strider_stats committed = stats();
  EXPECT_EQ(committed.types_unsupported, before.types_unsupported + 1);
  EXPECT_EQ(committed.types_planned, before.types_planned);
  int size = 0;
  MPI_Type_size(type, &size);
  std::vector<unsigned char> user(static_cast<std::size_t>(at));
  for (auto& b : user) b = static_cast<unsigned char>(rng());
  std::vector<unsigned char> ours(static_cast<std::size_t>(size)), theirs = ours;
  int p1 = 0, p2 = 0;
  EXPECT_EQ(MPI_Pack(user.data(), 1, type, ours.data(), size, &p1, MPI_COMM_SELF), MPI_SUCCESS);
  EXPECT_EQ(PMPI_Pack(user.data(), 1, type, theirs.data(), size, &p2, MPI_COMM_SELF), MPI_SUCCESS);
  EXPECT_EQ(p1, size);
  EXPECT_TRUE(ours == theirs);
  EXPECT_EQ(stats().packs_host, committed.packs_host);  // served by the MPI, not Strider
  std::vector<unsigned char> back(user.size()), want(user.size());
  int p3 = 0, p4 = 0;
  MPI_Unpack(ours.data(), size, &p3, back.data(), 1, type, MPI_COMM_SELF);
  PMPI_Unpack(ours.data(), size, &p4, want.data(), 1, type, MPI_COMM_SELF);
  EXPECT_TRUE(back == want);
  MPI_Type_free(&type);
}

}  // namespace
}  // namespace strider::testing
