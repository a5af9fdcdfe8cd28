// The constructors' IR against index arithmetic written independently from the standard.
#include "ir/constructors.hpp"

#include <gtest/gtest.h>

#include <random>

#include "ir/typemap.hpp"
#include "random_tree.hpp"

namespace strider::ir {
namespace {

// Elements of an n-d array region, enumerated with the fastest dim varying fastest.
std::vector<std::int64_t> region_offsets(Order order, const std::vector<std::int64_t>& sizes,
                                         const std::vector<std::vector<std::int64_t>>& owned,
                                         std::int64_t elem) {
  const std::size_t n = sizes.size();
  std::vector<std::size_t> dims(n);  // slowest first
  for (std::size_t k = 0; k < n; ++k) dims[k] = order == Order::C ? k : n - 1 - k;
  std::vector<std::int64_t> out;
  std::vector<std::size_t> idx(n, 0);
  for (const auto& o : owned) {
    if (o.empty()) return out;
  }
  for (;;) {
    std::int64_t linear = 0;
    for (std::size_t k = 0; k < n; ++k) {  // row-major linearization in `dims` order
      const std::size_t d = dims[k];
      linear = linear * sizes[d] + owned[d][idx[d]];
    }
    for (std::int64_t b = 0; b < elem; ++b) out.push_back(linear * elem + b);
    std::size_t k = n;
    while (k-- > 0) {
      const std::size_t d = dims[k];
      if (++idx[d] < owned[d].size()) break;
      idx[d] = 0;
      if (k == 0) return out;
    }
  }
}

TEST(Constructors, SubarrayMatchesIndexArithmetic) {
  std::mt19937_64 rng(99);
  for (int t = 0; t < 3000; ++t) {
    const std::size_t n = 1 + t % 4;
    std::vector<std::int64_t> sizes(n), sub(n), starts(n);
    std::vector<std::vector<std::int64_t>> owned(n);
    for (std::size_t d = 0; d < n; ++d) {
      sizes[d] = testing::pick(rng, 1, 6);
      sub[d] = testing::pick(rng, 1, sizes[d]);
      starts[d] = testing::pick(rng, 0, sizes[d] - sub[d]);
      for (std::int64_t i = 0; i < sub[d]; ++i) owned[d].push_back(starts[d] + i);
    }
    const Order order = t % 2 ? Order::C : Order::Fortran;
    const std::int64_t elem = testing::pick(rng, 1, 3);
    const Node node = subarray(order, sizes, sub, starts, {Node::dense(0, elem), elem});
    ASSERT_EQ(byte_offsets(node), region_offsets(order, sizes, owned, elem));
  }
}

TEST(Constructors, DarrayMatchesIndexArithmetic) {
  std::mt19937_64 rng(100);
  int built = 0;
  for (int t = 0; t < 3000; ++t) {
    const std::size_t n = 1 + t % 3;
    std::vector<std::int64_t> gsizes(n), psizes(n), dargs(n);
    std::vector<Distribution> distribs(n);
    std::int64_t size = 1;
    for (std::size_t d = 0; d < n; ++d) {
      gsizes[d] = testing::pick(rng, 1, 9);
      distribs[d] = static_cast<Distribution>(testing::pick(rng, 0, 2));
      psizes[d] = distribs[d] == Distribution::None ? 1 : testing::pick(rng, 1, 3);
      size *= psizes[d];
      dargs[d] = testing::pick(rng, 0, 1) ? kDefaultDistributionArg : testing::pick(rng, 1, 4);
      if (distribs[d] == Distribution::Block && dargs[d] != kDefaultDistributionArg &&
          dargs[d] * psizes[d] < gsizes[d]) {
        dargs[d] = (gsizes[d] + psizes[d] - 1) / psizes[d];
      }
      if (distribs[d] == Distribution::None) dargs[d] = kDefaultDistributionArg;
    }
    const std::int64_t rank = testing::pick(rng, 0, size - 1);
    std::vector<std::vector<std::int64_t>> owned(n);
    std::int64_t rest = rank;
    for (std::size_t k = n; k-- > 0;) {
      const std::int64_t coord = rest % psizes[k];
      rest /= psizes[k];
      for (std::int64_t i = 0; i < gsizes[k]; ++i) {
        std::int64_t owner = 0;
        if (distribs[k] == Distribution::Block) {
          const std::int64_t b = dargs[k] == kDefaultDistributionArg
                                     ? (gsizes[k] + psizes[k] - 1) / psizes[k]
                                     : dargs[k];
          owner = i / b;
        } else if (distribs[k] == Distribution::Cyclic) {
          const std::int64_t b = dargs[k] == kDefaultDistributionArg ? 1 : dargs[k];
          owner = (i / b) % psizes[k];
        }
        if (owner == coord) owned[k].push_back(i);
      }
    }
    const Order order = t % 2 ? Order::C : Order::Fortran;
    const Node node =
        darray(size, rank, order, gsizes, distribs, dargs, psizes, {Node::dense(0, 2), 2});
    ASSERT_EQ(byte_offsets(node), region_offsets(order, gsizes, owned, 2)) << "case " << t;
    ++built;
  }
  EXPECT_EQ(built, 3000);
}

TEST(Constructors, RejectErroneousArguments) {
  const std::int64_t sizes[] = {4}, sub[] = {5}, starts[] = {0};
  EXPECT_THROW(subarray(Order::C, sizes, sub, starts, {Node::dense(0, 1), 1}),
               std::invalid_argument);
  const std::int64_t g[] = {10}, d[] = {2}, p[] = {3};
  const Distribution block[] = {Distribution::Block};
  EXPECT_THROW(darray(3, 0, Order::C, g, block, d, p, {Node::dense(0, 1), 1}),
               std::invalid_argument);
  const std::int64_t one[] = {1}, two[] = {0, 1};
  EXPECT_THROW(hindexed(one, two, {Node::dense(0, 1), 1}), std::invalid_argument);
}

}  // namespace
}  // namespace strider::ir
