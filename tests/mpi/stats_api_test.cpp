// strider_get_stats_sized writes exactly the size it is given (up to the library's struct) and
// nothing past it; strider_get_stats, the call older programs were built against, writes only
// the struct as it first shipped (7 counters). Each checked with guard bytes after the struct.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "mpi_test_support.hpp"

namespace strider::testing {
namespace {

using GetSized = int (*)(strider_stats*, size_t);
using GetFirst = int (*)(strider_stats*);

constexpr unsigned char kGuard = 0xA5;
constexpr std::size_t kSlack = 64;

// A buffer for the struct and guard bytes after it, every byte kGuard.
std::vector<unsigned char> guarded() {
  return std::vector<unsigned char>(sizeof(strider_stats) + kSlack, kGuard);
}

// How many bytes at the start differ from kGuard (with counters that are never 0xA5A5...).
std::size_t last_written(const std::vector<unsigned char>& b) {
  std::size_t last = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (b[i] != kGuard) last = i + 1;
  }
  return last;
}

TEST(StatsApi, SizedWritesExactlyTheSizeGiven) {
  const auto get = reinterpret_cast<GetSized>(dlsym(RTLD_DEFAULT, "strider_get_stats_sized"));
  ASSERT_NE(get, nullptr) << "libstrider is not loaded";
  // Counters to see: a committed type is planned (types_planned, the first field, becomes 1+).
  MPI_Datatype t;
  MPI_Type_vector(4, 1, 2, MPI_INT, &t);
  MPI_Type_commit(&t);
  std::vector<unsigned char> full = guarded();
  ASSERT_EQ(get(reinterpret_cast<strider_stats*>(full.data()), sizeof(strider_stats)),
            static_cast<int>(sizeof(strider_stats)));
  for (std::size_t i = sizeof(strider_stats); i < full.size(); ++i) {
    ASSERT_EQ(full[i], kGuard) << "written past the struct at byte " << i;
  }
  const std::size_t sizes[] = {1,
                               7,
                               8,
                               13,
                               offsetof(strider_stats, packs_gpu),
                               offsetof(strider_stats, offers_in_place),
                               sizeof(strider_stats) - 1,
                               sizeof(strider_stats)};
  for (const std::size_t size : sizes) {
    SCOPED_TRACE(size);
    std::vector<unsigned char> b = guarded();
    ASSERT_EQ(get(reinterpret_cast<strider_stats*>(b.data()), size), static_cast<int>(size));
    for (std::size_t i = size; i < b.size(); ++i) {
      ASSERT_EQ(b[i], kGuard) << "written past the size given, at byte " << i;
    }
    // The bytes written are the counters (nothing ran in between to change them).
    EXPECT_EQ(std::memcmp(b.data(), full.data(), size), 0);
  }
  // More than the library has (a program built with a newer header): only the library's.
  std::vector<unsigned char> b = guarded();
  EXPECT_EQ(get(reinterpret_cast<strider_stats*>(b.data()), b.size()),
            static_cast<int>(sizeof(strider_stats)));
  EXPECT_LE(last_written(b), sizeof(strider_stats));
  EXPECT_EQ(get(nullptr, 0), 0);
  EXPECT_EQ(get(nullptr, sizeof(strider_stats)), -1);
  strider_stats s{};
  get(&s, sizeof s);
  EXPECT_GE(s.types_planned, 1u);
  MPI_Type_free(&t);
}

TEST(StatsApi, UnsizedWritesOnlyTheFirstShippedStruct) {
  const auto get = reinterpret_cast<GetFirst>(dlsym(RTLD_DEFAULT, "strider_get_stats"));
  ASSERT_NE(get, nullptr) << "libstrider is not loaded";
  constexpr std::size_t kFirst = 7 * sizeof(std::uint64_t);  // types_planned .. plans_cached
  static_assert(offsetof(strider_stats, plans_cached) + sizeof(std::uint64_t) == kFirst);
  std::vector<unsigned char> b = guarded();
  EXPECT_EQ(get(reinterpret_cast<strider_stats*>(b.data())), 0);
  for (std::size_t i = kFirst; i < b.size(); ++i) {
    ASSERT_EQ(b[i], kGuard) << "written past the first struct, at byte " << i;
  }
  EXPECT_EQ(last_written(b) > 0, true) << "nothing written";
}

}  // namespace
}  // namespace strider::testing
