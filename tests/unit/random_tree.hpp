// Random IR trees for property tests: every node kind, offsets and strides of both signs,
// interleaving strides smaller than the child's span, zero counts, repeated shapes in lists
// (so runs are found), and a printed seed for reproduction.
#pragma once

#include <cstdint>
#include <random>

#include "ir/node.hpp"

namespace strider::testing {

inline std::int64_t pick(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}

inline ir::Node random_tree(std::mt19937_64& rng, int depth) {
  const std::int64_t r = pick(rng, 0, 9);
  if (depth <= 1 || r < 3) {
    return ir::Node::dense(pick(rng, -8, 8),
                           pick(rng, 0, 2) == 0 ? pick(rng, 0, 3) : pick(rng, 1, 9));
  }
  if (r < 7) {
    ir::Node child = random_tree(rng, depth - 1);
    const std::int64_t span = ir::true_span(child).hi - ir::true_span(child).lo;
    std::int64_t stride;
    switch (pick(rng, 0, 4)) {
      case 0:
        stride = span;
        break;  // dense-foldable
      case 1:
        stride = span + pick(rng, 1, 6);
        break;  // gaps
      case 2:
        stride = pick(rng, 0, span);
        break;  // interleaved / overlapping
      case 3:
        stride = -span - pick(rng, 0, 4);
        break;  // negative
      default:
        stride = ir::packed_size(child);
        break;
    }
    return ir::Node::stream(pick(rng, -16, 16),
                            pick(rng, 0, 4) == 0 ? pick(rng, 0, 1) : pick(rng, 1, 5), stride,
                            std::move(child));
  }
  std::vector<ir::Node> items;
  const std::int64_t n = pick(rng, 0, 5);
  ir::Node repeated = random_tree(rng, depth - 1);
  std::int64_t at = pick(rng, -20, 20);
  const std::int64_t step = pick(rng, 0, 1) ? pick(rng, 1, 30) : ir::packed_size(repeated);
  for (std::int64_t i = 0; i < n; ++i) {
    ir::Node item = pick(rng, 0, 2) ? repeated : random_tree(rng, depth - 1);
    item.offset += at;
    at += pick(rng, 0, 3) ? step : pick(rng, -10, 40);
    items.push_back(std::move(item));
  }
  ir::Node list = ir::Node::list(std::move(items));
  list.offset = pick(rng, 0, 3) == 0 ? pick(rng, -5, 5) : 0;
  return list;
}

}  // namespace strider::testing
