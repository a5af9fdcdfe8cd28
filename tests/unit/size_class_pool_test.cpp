#include "ipc/size_class_pool.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <set>
#include <vector>

namespace strider::ipc {
namespace {

// An allocator that records what is live, and can be told to fail.
struct FakeMemory {
  std::set<void*> live;
  std::size_t live_bytes = 0;
  std::vector<std::size_t> sizes;
  bool fail = false;
  Allocator allocator() {
    return {[this](std::size_t bytes) -> void* {
              if (fail) return nullptr;
              void* p = std::malloc(bytes);
              live.insert(p);
              sizes.push_back(bytes);
              live_bytes += bytes;
              return p;
            },
            [this](void* p) {
              EXPECT_EQ(live.erase(p), 1u) << "freed twice or never allocated";
              std::free(p);
            }};
  }
};

TEST(SizeClassPool, ClassesArePowersOfTwoFromTheSmallest) {
  EXPECT_EQ(SizeClassPool::class_size(0), SizeClassPool::kSmallestClass);
  EXPECT_EQ(SizeClassPool::class_size(1), SizeClassPool::kSmallestClass);
  EXPECT_EQ(SizeClassPool::class_size(4096), 4096u);
  EXPECT_EQ(SizeClassPool::class_size(4097), 8192u);
  EXPECT_EQ(SizeClassPool::class_size((1u << 20) + 1), 2u << 20);
  for (std::size_t b = 1; b < (1u << 22); b = b * 3 + 1) {
    const std::size_t c = SizeClassPool::class_size(b);
    EXPECT_GE(c, b);
    EXPECT_EQ(c & (c - 1), 0u);
    EXPECT_LT(c / 2, std::max<std::size_t>(b, SizeClassPool::kSmallestClass));
  }
}

TEST(SizeClassPool, ReusesAfterWarmUp) {
  FakeMemory memory;
  {
    SizeClassPool pool(memory.allocator(), 1 << 24);
    std::mt19937_64 rng(7);
    // Warm-up: one buffer of each class in use at most twice at a time.
    for (int round = 0; round < 1000; ++round) {
      const std::size_t a = 1 + rng() % (1 << 20), b = 1 + rng() % (1 << 20);
      Block x = pool.acquire(a), y = pool.acquire(b);
      ASSERT_TRUE(x && y);
      EXPECT_GE(x.capacity, a);
      EXPECT_NE(x.data, y.data);
      pool.give_back(x);
      pool.give_back(y);
    }
    const auto warmed = pool.allocations();
    const auto held = pool.held();
    EXPECT_LE(warmed, 2u * 9);  // two per class, 4 KiB .. 1 MiB
    for (int round = 0; round < 1000; ++round) {
      Block x = pool.acquire(1 + rng() % (1 << 20)), y = pool.acquire(1 + rng() % (1 << 20));
      pool.give_back(y);
      pool.give_back(x);
    }
    EXPECT_EQ(pool.allocations(), warmed) << "the hot path allocated after warm-up";
    EXPECT_EQ(pool.held(), held);
  }
  EXPECT_TRUE(memory.live.empty()) << "the pool leaked cached buffers";
}

TEST(SizeClassPool, StaysWithinItsBound) {
  FakeMemory memory;
  SizeClassPool pool(memory.allocator(), 64 << 10);
  std::vector<Block> lent;
  for (int i = 0; i < 40; ++i) lent.push_back(pool.acquire(8 << 10));
  EXPECT_LE(pool.held(), 64u << 10);
  int uncached = 0;
  for (const Block& b : lent) uncached += !b.cached;
  EXPECT_EQ(uncached, 40 - 8);
  for (const Block& b : lent) pool.give_back(b);
  EXPECT_EQ(memory.live.size(), 8u) << "over-the-bound buffers must be freed when given back";
  // A larger class evicts cached buffers of other classes to fit.
  Block big = pool.acquire(64 << 10);
  EXPECT_TRUE(big.cached);
  EXPECT_EQ(pool.held(), 64u << 10);
  pool.give_back(big);
  pool.trim();
  EXPECT_TRUE(memory.live.empty());
  EXPECT_EQ(pool.held(), 0u);
}

TEST(SizeClassPool, MakesRoomByFreeingOnlyWhatItNeedsLargestFirst) {
  FakeMemory memory;
  SizeClassPool pool(memory.allocator(), 64 << 10);
  std::vector<Block> blocks = {pool.acquire(16 << 10), pool.acquire(16 << 10),
                               pool.acquire(8 << 10), pool.acquire(8 << 10)};
  for (const Block& b : blocks) pool.give_back(b);
  ASSERT_EQ(pool.held(), 48u << 10);
  const auto before = pool.allocations();
  Block big = pool.acquire(32 << 10);  // 16 KiB over the bound: one 16 KiB buffer goes
  EXPECT_TRUE(big.cached);
  EXPECT_EQ(pool.held(), 64u << 10);
  EXPECT_EQ(memory.live.size(), 4u);
  // What stayed cached is reused without allocating.
  Block a = pool.acquire(16 << 10), b = pool.acquire(8 << 10), c = pool.acquire(8 << 10);
  EXPECT_EQ(pool.allocations(), before + 1);
  for (const Block& x : {big, a, b, c}) pool.give_back(x);
}

TEST(SizeClassPool, OutOfMemoryTrimsAndReportsEmpty) {
  FakeMemory memory;
  SizeClassPool pool(memory.allocator(), 1 << 20);
  pool.give_back(pool.acquire(100));
  memory.fail = true;
  EXPECT_FALSE(pool.acquire(1 << 16));
  EXPECT_TRUE(memory.live.empty()) << "cached buffers are released before giving up";
  memory.fail = false;
  Block b = pool.acquire(1 << 16);
  EXPECT_TRUE(b);
  pool.give_back(b);
}

TEST(SizeClassPool, ZeroBoundCachesNothing) {
  FakeMemory memory;
  SizeClassPool pool(memory.allocator(), 0);
  Block b = pool.acquire(10);
  EXPECT_FALSE(b.cached);
  pool.give_back(b);
  EXPECT_TRUE(memory.live.empty());
}

}  // namespace
}  // namespace strider::ipc
