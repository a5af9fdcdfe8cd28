// Threads commit, pack, unpack and free types concurrently under MPI_THREAD_MULTIPLE; every
// pack must give the standard's bytes (typespec's model: the system MPI deviates on a few
// types, see pack_differential_test), unpack must invert it, and no plan may outlive its type.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "mpi_test_support.hpp"
#include "typespec/random_type.hpp"
#include "typespec/type_spec.hpp"

namespace strider::testing {
namespace {

TEST(ThreadSafety, ConcurrentCommitPackFree) {
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE) GTEST_SKIP() << "the MPI does not provide THREAD_MULTIPLE";
  const int threads = 4;
  const long per_thread = env_long("STRIDER_TEST_THREAD_TYPES", 1500);
  const strider_stats before = stats();
  std::atomic<long> mismatches{0}, served{0}, checked{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::mt19937_64 rng(1000 * world_rank() + t);
      typespec::RandomTypeOptions options;
      options.max_size_bytes = 1 << 12;
      for (long i = 0; i < per_thread; ++i) {
        const std::string text = typespec::random_type(rng, options);
        MPI_Datatype type = typespec::build_type(text);
        MPI_Type_commit(&type);
        int size = 0;
        MPI_Type_size(type, &size);
        const int count = 1 + static_cast<int>(rng() % 4);
        ElementBuffer user = element_buffer(type, count, rng);
        MPI_Aint lb = 0, extent = 0;
        MPI_Type_get_extent(type, &lb, &extent);
        const auto layout = typespec::layout_of(typespec::parse(text));
        std::vector<unsigned char> ours(size * count);
        int p1 = 0;
        MPI_Pack(user.origin(), count, type, ours.data(), static_cast<int>(ours.size()), &p1,
                 MPI_COMM_SELF);
        const auto expected = layout ? reference_pack(*layout, extent, count, user.origin())
                                     : std::vector<unsigned char>{};
        // Round trip through Strider's unpack must restore the typemap bytes.
        ElementBuffer copy = element_buffer(type, count, rng);
        ElementBuffer want = copy;
        int p3 = 0;
        MPI_Unpack(ours.data(), static_cast<int>(ours.size()), &p3, copy.origin(), count, type,
                   MPI_COMM_SELF);
        if (layout) reference_unpack(*layout, extent, count, ours.data(), want.origin());
        if (!layout || p1 != size * count || p3 != p1 || ours != expected ||
            copy.bytes != want.bytes) {
          if (mismatches++ < 5) std::printf("mismatch on %s\n", text.c_str());
        }
        if (size > 0) ++checked;
        if (!typespec::is_named(type)) MPI_Type_free(&type);
      }
    });
  }
  for (auto& th : pool) th.join();
  const strider_stats after = stats();
  served = static_cast<long>(after.packs_host - before.packs_host);
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(served.load(), checked.load());
  std::printf("threads %d x %ld types; packs served by Strider: %ld; plans cached after: %llu\n",
              threads, per_thread, served.load(),
              static_cast<unsigned long long>(after.plans_cached));
  // Only predefined types may remain cached once every derived type is freed.
  EXPECT_LT(after.plans_cached, 64u);
}

}  // namespace
}  // namespace strider::testing
