// The in-place read record of same-node collectives (transfer/collective/direct_layout.hpp):
// the bytes a layout touches, checked against every byte of random layouts; the reader's form;
// and the checks a received record passes before a kernel follows it.
#include "transfer/collective/direct_layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

namespace strider::transfer::collective {
namespace {

canon::StridedBlock random_block(std::mt19937_64& rng) {
  canon::StridedBlock sb;
  sb.offset = static_cast<std::int64_t>(rng() % 200) - 100;
  sb.block = 1 + static_cast<std::int64_t>(rng() % 64);
  const int dims = static_cast<int>(rng() % 4);
  for (int k = 0; k < dims; ++k) {
    sb.dims.push_back(
        {1 + static_cast<std::int64_t>(rng() % 5), static_cast<std::int64_t>(rng() % 601) - 300});
  }
  return sb;
}

// Every byte the layout touches, by walking each element's every block.
ByteSpan walked_span(const canon::StridedBlock& sb, std::int64_t extent, std::int64_t count) {
  ByteSpan span{std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()};
  std::vector<std::int64_t> starts{sb.offset};
  for (const canon::Dim& d : sb.dims) {
    std::vector<std::int64_t> next;
    for (std::int64_t s : starts) {
      for (std::int64_t i = 0; i < d.count; ++i) next.push_back(s + i * d.stride);
    }
    starts = next;
  }
  for (std::int64_t e = 0; e < count; ++e) {
    for (std::int64_t s : starts) {
      span.lo = std::min(span.lo, e * extent + s);
      span.hi = std::max(span.hi, e * extent + s + sb.block);
    }
  }
  return span;
}

TEST(DirectLayout, TouchedBytesAreThoseOfEveryBlockOfEveryElement) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 3000; ++i) {
    const canon::StridedBlock sb = random_block(rng);
    const std::int64_t extent = static_cast<std::int64_t>(rng() % 2001) - 1000;
    const std::int64_t count = 1 + static_cast<std::int64_t>(rng() % 4);
    const ByteSpan want = walked_span(sb, extent, count);
    const ByteSpan got = touched_bytes(sb, extent, count);
    ASSERT_EQ(got.lo, want.lo) << canon::to_string(sb) << " extent " << extent << " x" << count;
    ASSERT_EQ(got.hi, want.hi) << canon::to_string(sb) << " extent " << extent << " x" << count;
  }
}

TEST(DirectLayout, TheReadersFormIsTheSendersBlockWithItsSummaries) {
  std::mt19937_64 rng(6);
  for (int i = 0; i < 500; ++i) {
    const canon::StridedBlock sb = random_block(rng);
    const DirectLayout layout = layout_of(sb, 4096, 3);
    const canon::CanonicalForm form = direct_form(layout);
    ASSERT_EQ(form.pieces.size(), 1u);
    EXPECT_EQ(form.pieces.front(), sb);
    EXPECT_TRUE(form.strided());
    EXPECT_EQ(form.size, sb.packed_bytes());
    std::uint64_t bits = canon::magnitude(sb.offset) | static_cast<std::uint64_t>(sb.block);
    std::int64_t largest = 0;
    for (const canon::Dim& d : sb.dims) {
      bits |= canon::magnitude(d.stride);
      largest = std::max(largest, d.count);
    }
    EXPECT_EQ(form.layout_bits, bits);
    EXPECT_EQ(form.max_piece_count, largest);
    EXPECT_EQ(layout.extent, 4096);
    EXPECT_EQ(layout.count, 3);
  }
}

// A record is followed only when every byte it touches lies in the allocation it names.
TEST(DirectLayout, ARecordIsConsistentOnlyInsideItsAllocationAndWithItsBytes) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 1000; ++i) {
    const canon::StridedBlock sb = random_block(rng);
    const std::int64_t extent = static_cast<std::int64_t>(rng() % 2001) - 1000;
    const std::int64_t count = 1 + static_cast<std::int64_t>(rng() % 4);
    DirectLayout l = layout_of(sb, extent, count);
    const ByteSpan span = touched_bytes(sb, extent, count);
    const std::int64_t bytes = sb.packed_bytes() * count;
    // Exactly fitting: the first touched byte at the allocation's base, the last at its end.
    l.origin = -span.lo;
    l.allocation_bytes = span.hi - span.lo;
    EXPECT_TRUE(consistent(l, bytes));
    EXPECT_FALSE(consistent(l, bytes + 1));
    DirectLayout low = l;
    low.origin -= 1;  // one byte before the base
    EXPECT_FALSE(consistent(low, bytes));
    DirectLayout high = l;
    high.allocation_bytes -= 1;  // one byte past the end
    EXPECT_FALSE(consistent(high, bytes));
  }
  DirectLayout l = layout_of({0, 8, {{4, 16}}}, 64, 2);
  l.allocation_bytes = 1 << 10;
  EXPECT_TRUE(consistent(l, 64));
  DirectLayout bad = l;
  bad.dims = static_cast<std::int64_t>(canon::kMaxDims) + 1;
  EXPECT_FALSE(consistent(bad, 64));
  bad = l;
  bad.dim[0] = 0;  // a dim of no elements
  EXPECT_FALSE(consistent(bad, 0));
  bad = l;
  bad.count = 0;
  EXPECT_FALSE(consistent(bad, 0));
}

}  // namespace
}  // namespace strider::transfer::collective
