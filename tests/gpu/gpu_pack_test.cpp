// MPI_Pack / MPI_Unpack on GPU buffers through Strider, against the system MPI's PMPI_Pack /
// PMPI_Unpack on host copies of the same bytes: random nested datatypes, every combination of
// memory kinds with a GPU-resident side, counts 1-8, non-zero positions, misaligned bases.
// STRIDER_GPU_ENGINE=off runs the same checks through the staged path.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "gpu_memory.hpp"
#include "mpi_test_support.hpp"
#include "typespec/random_type.hpp"
#include "typespec/type_spec.hpp"

namespace strider::testing {
namespace {

bool gpu_engine_on() {
  const char* v = std::getenv("STRIDER_GPU_ENGINE");
  return v == nullptr || (std::strcmp(v, "0") != 0 && std::strcmp(v, "off") != 0);
}

std::uint64_t served(const strider_stats& s, bool pack) {
  if (gpu_engine_on()) return pack ? s.packs_gpu : s.unpacks_gpu;
  return pack ? s.packs_staged : s.unpacks_staged;
}

struct Span {
  std::int64_t lo = 0, hi = 0;  // bytes touched by `count` elements, relative to the origin
};

Span span_of(MPI_Datatype type, int count) {
  MPI_Aint lb, extent, tlb, textent;
  MPI_Type_get_extent(type, &lb, &extent);
  MPI_Type_get_true_extent(type, &tlb, &textent);
  Span s{tlb, tlb + textent};
  for (int e : {0, count - 1}) {
    s.lo = std::min<std::int64_t>(s.lo, tlb + e * extent);
    s.hi = std::max<std::int64_t>(s.hi, tlb + textent + e * extent);
  }
  return s;
}

class GpuPack : public ::testing::Test {
 protected:
  static constexpr std::size_t kPoolBytes = 8u << 20;
  // Separate pools for the user and the packed side: the two buffers must not overlap.
  void SetUp() override {
    for (Kind k : kAllKinds) {
      user_pools_.push_back(std::make_unique<Pool>(k, kPoolBytes));
      packed_pools_.push_back(std::make_unique<Pool>(k, kPoolBytes));
    }
  }
  Pool& user_pool(Kind k) { return *user_pools_[static_cast<int>(k)]; }
  Pool& packed_pool(Kind k) { return *packed_pools_[static_cast<int>(k)]; }
  std::vector<std::unique_ptr<Pool>> user_pools_, packed_pools_;
};

// Checks one type with one memory combination. Returns false if Strider did not serve it.
void check(const std::string& text, MPI_Datatype type, int count, Pool& user_pool,
           Pool& packed_pool, std::mt19937_64& rng, long& deviations) {
  SCOPED_TRACE(text + " count " + std::to_string(count) + " user " + name(user_pool.kind()) +
               " packed " + name(packed_pool.kind()));
  int size = 0;
  MPI_Type_size(type, &size);
  const Span span = span_of(type, count);
  const std::size_t span_bytes = static_cast<std::size_t>(span.hi - span.lo);
  const std::int64_t misalign = static_cast<std::int64_t>(rng() % 16);
  ASSERT_LT(span_bytes + 64, user_pool.capacity());
  std::byte* user_start = user_pool.base() + 32 + misalign;
  std::byte* origin = user_start - span.lo;
  const int position0 = static_cast<int>(rng() % 16);
  const int outsize = position0 + size * count + static_cast<int>(rng() % 8);
  std::byte* packed = packed_pool.base() + (rng() % 16);

  // Pack.
  fill_random(user_start, span_bytes, rng);
  fill_random(packed, static_cast<std::size_t>(outsize), rng);
  auto user_host = read_back(user_start, span_bytes);
  auto expected = read_back(packed, static_cast<std::size_t>(outsize));
  const auto initial_packed = expected;
  int pos_ours = position0, pos_theirs = position0;
  const strider_stats before = stats();
  ASSERT_EQ(MPI_Pack(origin, count, type, packed, outsize, &pos_ours, MPI_COMM_SELF), MPI_SUCCESS);
  EXPECT_EQ(served(stats(), true), served(before, true) + 1) << "not served by Strider";
  ASSERT_EQ(PMPI_Pack(user_host.data() - span.lo, count, type, expected.data(), outsize,
                      &pos_theirs, MPI_COMM_SELF),
            MPI_SUCCESS);
  EXPECT_EQ(pos_ours, pos_theirs);
  const auto got = read_back(packed, static_cast<std::size_t>(outsize));
  if (got != expected) {
    // The system MPI may deviate from the standard (see pack_differential_test): ask the model.
    const auto layout = typespec::layout_of(typespec::parse(text));
    ASSERT_TRUE(layout.has_value());
    MPI_Aint lb, extent;
    MPI_Type_get_extent(type, &lb, &extent);
    const auto ref = reference_pack(*layout, extent, count, user_host.data() - span.lo);
    std::copy(ref.begin(), ref.end(), expected.begin() + position0);
    std::size_t first_bad = 0;
    while (first_bad < got.size() && got[first_bad] == expected[first_bad]) ++first_bad;
    std::string around;
    for (std::size_t k = first_bad >= 8 ? first_bad - 8 : 0;
         k < std::min(got.size(), first_bad + 24); ++k) {
      // got / expected / what was there before the call
      around += std::to_string(k) + ":" + std::to_string(got[k]) + "/" +
                std::to_string(expected[k]) + "/" + std::to_string(initial_packed[k]) + " ";
    }
    ASSERT_EQ(first_bad, got.size())
        << "pack differs from the MPI and from the standard at byte " << first_bad << " of "
        << got.size() << " (position " << position0 << ", misalign " << misalign << ")\n"
        << describe(type) << "got/expected/before: " << around << "\nuser "
        << static_cast<const void*>(origin) << " packed " << static_cast<const void*>(packed);
    ++deviations;
  }

  // Unpack random packed bytes into random user bytes.
  fill_random(user_start, span_bytes, rng);
  fill_random(packed, static_cast<std::size_t>(outsize), rng);
  user_host = read_back(user_start, span_bytes);
  const auto user_before = user_host;
  const auto packed_host = read_back(packed, static_cast<std::size_t>(outsize));
  pos_ours = pos_theirs = position0;
  const strider_stats before_unpack = stats();
  ASSERT_EQ(MPI_Unpack(packed, outsize, &pos_ours, origin, count, type, MPI_COMM_SELF),
            MPI_SUCCESS);
  EXPECT_EQ(served(stats(), false), served(before_unpack, false) + 1) << "not served by Strider";
  ASSERT_EQ(PMPI_Unpack(packed_host.data(), outsize, &pos_theirs, user_host.data() - span.lo, count,
                        type, MPI_COMM_SELF),
            MPI_SUCCESS);
  EXPECT_EQ(pos_ours, pos_theirs);
  const auto user_got = read_back(user_start, span_bytes);
  if (user_got != user_host) {
    const auto layout = typespec::layout_of(typespec::parse(text));
    ASSERT_TRUE(layout.has_value());
    MPI_Aint lb, extent;
    MPI_Type_get_extent(type, &lb, &extent);
    auto want = user_before;
    reference_unpack(*layout, extent, count, packed_host.data() + position0, want.data() - span.lo);
    ASSERT_EQ(user_got, want) << "unpack differs from the MPI and from the standard";
    ++deviations;
  }
}

TEST_F(GpuPack, RandomTypesEveryMemoryCombination) {
  const long types = env_long("STRIDER_TEST_TYPES", 6000);
  const auto seed =
      static_cast<std::uint64_t>(env_long("STRIDER_TEST_SEED", 424242)) + 7919ull * world_rank();
  std::printf("[rank %d] seed %llu, %ld types, GPU engine %s\n", world_rank(),
              static_cast<unsigned long long>(seed), types, gpu_engine_on() ? "on" : "off");
  std::mt19937_64 rng(seed);
  typespec::RandomTypeOptions options;
  // Every pair with a GPU-resident side (host-only pairs are the host engine's tests).
  std::vector<std::pair<Kind, Kind>> combos;
  for (Kind u : kAllKinds) {
    for (Kind p : kAllKinds) {
      const bool gpu =
          u == Kind::Device || u == Kind::Managed || p == Kind::Device || p == Kind::Managed;
      if (gpu) combos.emplace_back(u, p);
    }
  }
  long checked = 0, deviations = 0;
  for (long t = 0; t < types && !HasFailure(); ++t) {
    const std::string text = typespec::random_type(rng, options);
    MPI_Datatype type = typespec::build_type(text);
    ASSERT_EQ(MPI_Type_commit(&type), MPI_SUCCESS);
    int size = 0;
    MPI_Type_size(type, &size);
    if (size > 0) {
      const auto [u, p] = combos[static_cast<std::size_t>(t) % combos.size()];
      check(text, type, 1 + static_cast<int>(rng() % 8), user_pool(u), packed_pool(p), rng,
            deviations);
      ++checked;
    }
    if (!typespec::is_named(type)) MPI_Type_free(&type);
  }
  std::printf(
      "[rank %d] GPU random types checked: %ld over %zu memory combinations; system MPI "
      "deviating from the standard: %ld\n",
      world_rank(), checked, combos.size(), deviations);
}

}  // namespace
}  // namespace strider::testing

namespace strider::testing {
namespace {

// A struct at MPI_BOTTOM whose members live in two different device allocations.
TEST(GpuPackShapes, StructAtBottomAcrossAllocations) {
  // The staged path copies the object's span, which here covers unmapped memory between the
  // two allocations: it is the GPU engine's case.
  if (!gpu_engine_on()) GTEST_SKIP() << "the staged path needs the object in one allocation";
  std::mt19937_64 rng(9);
  Pool a(Kind::Device, 1 << 16), b(Kind::Device, 1 << 16), out(Kind::Device, 1 << 16);
  fill_random(a.base(), 1 << 16, rng);
  fill_random(b.base(), 1 << 16, rng);
  MPI_Aint where[2];
  MPI_Get_address(a.base() + 100, &where[0]);
  MPI_Get_address(b.base() + 7, &where[1]);
  const int lengths[2] = {300, 5};
  const MPI_Datatype types[2] = {MPI_BYTE, MPI_INT};
  MPI_Datatype t;
  MPI_Type_create_struct(2, lengths, where, types, &t);
  MPI_Type_commit(&t);
  int position = 0;
  const strider_stats before = stats();
  ASSERT_EQ(MPI_Pack(MPI_BOTTOM, 1, t, out.base(), 1 << 16, &position, MPI_COMM_SELF), MPI_SUCCESS);
  EXPECT_EQ(stats().packs_gpu, before.packs_gpu + 1);
  ASSERT_EQ(position, 320);
  auto want = read_back(a.base() + 100, 300);
  const auto tail = read_back(b.base() + 7, 20);
  want.insert(want.end(), tail.begin(), tail.end());
  EXPECT_EQ(read_back(out.base(), 320), want);
  MPI_Type_free(&t);
}

// An object whose extent passes 4 GiB: 64-bit addressing with 32-bit indices.
TEST(GpuPackShapes, ExtentBeyondFourGiB) {
  const std::size_t gib = std::size_t{1} << 30;
  const std::size_t span = 5 * gib + 4096;
  std::byte* big = nullptr;
  if (cudaMalloc(&big, span) != cudaSuccess) GTEST_SKIP() << "no 5 GiB of device memory";
  std::mt19937_64 rng(10);
  Pool out(Kind::Device, 1 << 16);
  const std::size_t offsets[3] = {0, 5 * gib / 2, 5 * gib};
  for (std::size_t o : offsets) fill_random(big + o, 4096, rng);
  MPI_Datatype t;
  MPI_Type_create_hvector(3, 4096, static_cast<MPI_Aint>(5 * gib / 2), MPI_BYTE, &t);
  MPI_Type_commit(&t);
  int position = 0;
  ASSERT_EQ(MPI_Pack(big, 1, t, out.base(), 1 << 16, &position, MPI_COMM_SELF), MPI_SUCCESS);
  ASSERT_EQ(position, 3 * 4096);
  std::vector<unsigned char> want;
  for (std::size_t o : offsets) {
    const auto part = read_back(big + o, 4096);
    want.insert(want.end(), part.begin(), part.end());
  }
  EXPECT_EQ(read_back(out.base(), 3 * 4096), want);
  // And back: unpack into the big object after clearing it.
  for (std::size_t o : offsets) ASSERT_EQ(cudaMemset(big + o, 0, 4096), cudaSuccess);
  position = 0;
  ASSERT_EQ(MPI_Unpack(out.base(), 3 * 4096, &position, big, 1, t, MPI_COMM_SELF), MPI_SUCCESS);
  std::vector<unsigned char> back;
  for (std::size_t o : offsets) {
    const auto part = read_back(big + o, 4096);
    back.insert(back.end(), part.begin(), part.end());
  }
  EXPECT_EQ(back, want);
  MPI_Type_free(&t);
  cudaFree(big);
}

}  // namespace
}  // namespace strider::testing
