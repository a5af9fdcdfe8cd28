// The host engine against the reference: packing gathers the typemap's bytes in order,
// unpacking scatters them back and touches nothing else.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "canon/canonicalize.hpp"
#include "engine/cpu/pack.hpp"
#include "ir/typemap.hpp"
#include "random_tree.hpp"

namespace strider {
namespace {

TEST(CpuEngine, PackAndUnpackMatchTheTypemap) {
  const std::uint64_t seed = 424242;
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  int checked = 0;
  for (int t = 0; t < 20000; ++t) {
    const ir::Node tree = testing::random_tree(rng, 1 + t % 5);
    const auto typemap = ir::byte_offsets(tree);
    const auto form = canon::canonical_form(tree);
    ASSERT_TRUE(form);
    const ir::Span span = ir::true_span(tree);
    const std::int64_t extent =
        std::max<std::int64_t>(1, span.hi - span.lo) + testing::pick(rng, -2, 3);
    const std::int64_t count = testing::pick(rng, 1, 4);
    // Buffer covering all elements, whatever the signs of offsets and extent.
    std::int64_t lo = span.lo, hi = span.hi;
    for (std::int64_t e = 0; e < count; ++e) {
      lo = std::min(lo, span.lo + e * extent);
      hi = std::max(hi, span.hi + e * extent);
    }
    const std::int64_t margin = 16;
    std::vector<std::byte> user(static_cast<std::size_t>(hi - lo + 2 * margin));
    for (auto& b : user) b = static_cast<std::byte>(rng());
    std::byte* origin = user.data() + margin - lo;

    std::vector<std::byte> expected;
    for (std::int64_t e = 0; e < count; ++e) {
      for (std::int64_t off : typemap) expected.push_back(origin[e * extent + off]);
    }
    std::vector<std::byte> packed(expected.size() + 8, std::byte{0x5a});
    engine::cpu::pack(*form, extent, count, origin, packed.data());
    ASSERT_TRUE(std::equal(expected.begin(), expected.end(), packed.begin()))
        << ir::to_string(tree) << " count " << count << " extent " << extent;
    ASSERT_EQ(packed[expected.size()], std::byte{0x5a}) << "wrote past the packed size";

    // Unpack into a fresh buffer: a byte written twice (overlapping typemaps are allowed for
    // packing) takes the last value, and bytes outside the typemap stay as they were.
    std::vector<std::byte> target(user.size());
    for (auto& b : target) b = static_cast<std::byte>(rng());
    std::vector<std::byte> want = target;
    std::byte* target_origin = target.data() + margin - lo;
    std::byte* want_origin = want.data() + margin - lo;
    std::size_t k = 0;
    for (std::int64_t e = 0; e < count; ++e) {
      for (std::int64_t off : typemap) want_origin[e * extent + off] = packed[k++];
    }
    engine::cpu::unpack(*form, extent, count, packed.data(), target_origin);
    ASSERT_EQ(target, want) << ir::to_string(tree);
    ++checked;
  }
  EXPECT_EQ(checked, 20000);
}

}  // namespace
}  // namespace strider
