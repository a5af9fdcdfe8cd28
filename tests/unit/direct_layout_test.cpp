// The in-place read record of same-node collectives (ipc/direct_layout.hpp),
// against byte-by-byte walks of random layouts: the bytes a layout touches; a piece flattened
// into blocks and blocks cut along their outer dim keep every packed byte's address in order;
// the reader's form puts each segment at its mapping; the checks a received record passes.
#include "ipc/direct_layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

namespace strider::ipc {
namespace {

canon::StridedBlock random_block(std::mt19937_64& rng) {
  canon::StridedBlock sb;
  sb.offset = static_cast<std::int64_t>(rng() % 200) - 100;
  sb.block = 1 + static_cast<std::int64_t>(rng() % 16);
  const int dims = static_cast<int>(rng() % 4);
  for (int k = 0; k < dims; ++k) {
    sb.dims.push_back(
        {1 + static_cast<std::int64_t>(rng() % 4), static_cast<std::int64_t>(rng() % 601) - 300});
  }
  return sb;
}

// The address of every packed byte of a block, in packed order (dims[0] fastest).
void walk(const canon::StridedBlock& sb, std::int64_t shift, std::vector<std::int64_t>& out) {
  std::vector<std::int64_t> starts{sb.offset + shift};
  for (const canon::Dim& d : sb.dims) {
    std::vector<std::int64_t> next;
    for (std::int64_t i = 0; i < d.count; ++i) {
      for (std::int64_t s : starts) next.push_back(s + i * d.stride);
    }
    starts = next;
  }
  for (std::int64_t s : starts) {
    for (std::int64_t b = 0; b < sb.block; ++b) out.push_back(s + b);
  }
}

// Every packed byte's address of `count` elements of `form` (the typemap order: elements, then
// repetitions innermost first, then pieces).
std::vector<std::int64_t> walk(const canon::CanonicalForm& form, std::int64_t extent,
                               std::int64_t count) {
  std::vector<std::int64_t> out;
  for (std::int64_t e = 0; e < count; ++e) {
    std::vector<std::int64_t> shifts{e * extent};
    for (const canon::Dim& d : form.repeat) {
      std::vector<std::int64_t> next;
      for (std::int64_t i = 0; i < d.count; ++i) {
        for (std::int64_t s : shifts) next.push_back(s + i * d.stride);
      }
      shifts = next;
    }
    for (std::int64_t s : shifts) {
      for (const canon::StridedBlock& sb : form.pieces) walk(sb, s, out);
    }
  }
  return out;
}

canon::CanonicalForm random_form(std::mt19937_64& rng) {
  canon::CanonicalForm form;
  const int pieces = 1 + static_cast<int>(rng() % 3);
  for (int p = 0; p < pieces; ++p) form.pieces.push_back(random_block(rng));
  const int repeat = static_cast<int>(rng() % 3);
  for (int k = 0; k < repeat; ++k) {
    form.repeat.push_back(
        {1 + static_cast<std::int64_t>(rng() % 3), static_cast<std::int64_t>(rng() % 2001) - 1000});
  }
  canon::derive_summaries(form);
  return form;
}

TEST(DirectLayout, TouchedBytesAreThoseOfEveryBlockOfEveryElement) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 3000; ++i) {
    const canon::StridedBlock sb = random_block(rng);
    const std::int64_t extent = static_cast<std::int64_t>(rng() % 2001) - 1000;
    const std::int64_t count = 1 + static_cast<std::int64_t>(rng() % 4);
    canon::CanonicalForm form;
    form.pieces.push_back(sb);
    const auto bytes = walk(form, extent, count);
    const ByteSpan got = touched_bytes(sb, extent, count);
    ASSERT_EQ(got.lo, *std::min_element(bytes.begin(), bytes.end())) << canon::to_string(sb);
    ASSERT_EQ(got.hi, *std::max_element(bytes.begin(), bytes.end()) + 1) << canon::to_string(sb);
  }
}

TEST(DirectLayout, FlattenedBlocksKeepEveryPackedByteInOrder) {
  std::mt19937_64 rng(6);
  for (int i = 0; i < 2000; ++i) {
    const canon::CanonicalForm form = random_form(rng);
    const std::int64_t extent = static_cast<std::int64_t>(rng() % 4001) - 2000;
    const std::int64_t count = 1 + static_cast<std::int64_t>(rng() % 3);
    const auto blocks = flatten(form, extent, count, 1000);
    const auto want = walk(form, extent, count);
    std::vector<std::int64_t> got;
    for (const canon::StridedBlock& sb : blocks) walk(sb, 0, got);
    ASSERT_EQ(got, want) << canon::to_string(form) << " extent " << extent << " x" << count;
    // Past the bound: nothing.
    if (blocks.size() > 1) EXPECT_TRUE(flatten(form, extent, count, blocks.size() - 1).empty());
  }
}

// Many elements of a one-piece form (a vector, a subarray) are one block: a point-to-point
// receive of count elements is written in place as one segment.
TEST(DirectLayout, ElementsOfAOnePieceFormFoldIntoOneBlock) {
  std::mt19937_64 rng(9);
  for (int i = 0; i < 1000; ++i) {
    canon::CanonicalForm form = random_form(rng);
    form.pieces.resize(1);
    canon::derive_summaries(form);
    const std::int64_t extent = static_cast<std::int64_t>(rng() % 4001) - 2000;
    const std::int64_t count = 1 + static_cast<std::int64_t>(rng() % 40);
    const auto blocks = flatten(form, extent, count, 1);
    ASSERT_EQ(blocks.size(), 1u) << canon::to_string(form) << " x" << count;
    std::vector<std::int64_t> got;
    walk(blocks.front(), 0, got);
    ASSERT_EQ(got, walk(form, extent, count))
        << canon::to_string(form) << " extent " << extent << " x" << count;
  }
}

// The smallest block is never more than the shortest run of consecutive addresses the packed
// bytes make, and never less than the smallest piece; dense elements are one block.
TEST(DirectLayout, SmallestBlockOfAFormAndOfALayout) {
  std::mt19937_64 rng(10);
  for (int i = 0; i < 500; ++i) {
    const canon::CanonicalForm form = random_form(rng);
    const std::int64_t extent = static_cast<std::int64_t>(rng() % 4001) - 2000;
    const std::int64_t count = 1 + static_cast<std::int64_t>(rng() % 5);
    std::int64_t piece = std::numeric_limits<std::int64_t>::max();
    for (const canon::StridedBlock& sb : form.pieces) piece = std::min(piece, sb.block);
    const auto bytes = walk(form, extent, count);
    std::int64_t run = 1, shortest = std::numeric_limits<std::int64_t>::max();
    for (std::size_t k = 1; k <= bytes.size(); ++k) {
      if (k < bytes.size() && bytes[k] == bytes[k - 1] + 1) {
        ++run;
      } else {
        shortest = std::min(shortest, run);
        run = 1;
      }
    }
    const std::int64_t got = smallest_block(form, extent, count);
    // The threshold question agrees with the smallest block on either side of it.
    EXPECT_TRUE(blocks_at_least(form, extent, count, got)) << canon::to_string(form);
    for (std::size_t max : {std::size_t{1}, std::size_t{8}, std::size_t{64}}) {
      EXPECT_EQ(flattens_within(form, extent, count, max),
                !flatten(form, extent, count, max).empty())
          << canon::to_string(form) << " max " << max;
    }
    EXPECT_FALSE(blocks_at_least(form, extent, count, got + 1)) << canon::to_string(form);
    EXPECT_GE(got, piece) << canon::to_string(form);
    EXPECT_LE(got, shortest) << canon::to_string(form) << " extent " << extent << " x" << count;
    DirectLayout l;
    for (const canon::StridedBlock& sb : flatten(form, extent, count, DirectPolicy::kMaxSegments)) {
      l.segment[l.segments++] = segment_of(sb, 0);
    }
    if (l.segments > 0) EXPECT_EQ(smallest_block(l), got) << canon::to_string(form);
  }
  // 1000 dense 8-byte elements: one block of 8000 bytes.
  canon::CanonicalForm dense;
  dense.pieces.push_back(canon::StridedBlock{0, 8, {}});
  canon::derive_summaries(dense);
  EXPECT_EQ(smallest_block(dense, 8, 1000), 8000);
  EXPECT_EQ(smallest_block(dense, 16, 1000), 8);
}

// A one-piece form whose dims, repetitions and elements exceed kMaxDims is not folded: its
// elements and repetitions are listed, in packed order, within the bound.
TEST(DirectLayout, FormsPastTheDimBoundAreListed) {
  canon::CanonicalForm form;
  canon::StridedBlock sb{0, 2, {}};
  for (int k = 0; k < 6; ++k) sb.dims.push_back({2, 4 << k});
  form.pieces.push_back(sb);
  form.repeat.push_back({2, 1000});
  form.repeat.push_back({2, 3000});
  canon::derive_summaries(form);
  const auto blocks = flatten(form, 9000, 3, 64);  // 6 + 2 + 1 dims > kMaxDims
  ASSERT_EQ(blocks.size(), 12u);                   // 3 elements x 4 repetitions
  std::vector<std::int64_t> got;
  for (const canon::StridedBlock& b : blocks) walk(b, 0, got);
  EXPECT_EQ(got, walk(form, 9000, 3));
  EXPECT_TRUE(flatten(form, 9000, 3, 11).empty());
}

TEST(DirectLayout, SplittingAlongTheOutermostDimKeepsEveryPackedByteInOrder) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const canon::StridedBlock sb = random_block(rng);
    std::vector<std::int64_t> want, got;
    walk(sb, 0, want);
    const auto parts = split_outermost(sb);
    EXPECT_EQ(parts.size(), sb.dims.empty() ? 1u : static_cast<std::size_t>(sb.dims.back().count));
    for (const canon::StridedBlock& part : parts) walk(part, 0, got);
    ASSERT_EQ(got, want) << canon::to_string(sb);
  }
}

// Segments in two allocations: the reader's form addresses each byte at its allocation's
// mapping plus the segment's offset, in the record's order.
TEST(DirectLayout, TheReadersFormPutsEachSegmentAtItsMapping) {
  std::mt19937_64 rng(8);
  for (int i = 0; i < 500; ++i) {
    DirectLayout l;
    std::vector<std::int64_t> want;
    // Addresses only (never dereferenced): two mappings, the second below or above the first.
    const std::byte* bases[2] = {
        reinterpret_cast<const std::byte*>(std::uintptr_t{1} << 30),
        reinterpret_cast<const std::byte*>((std::uintptr_t{1} << 30) + 4096 * (rng() % 9) - 16384)};
    l.allocations = 2;
    l.segments = 1 + static_cast<std::int64_t>(rng() % DirectPolicy::kMaxSegments);
    for (std::int64_t k = 0; k < l.segments; ++k) {
      canon::StridedBlock sb = random_block(rng);
      sb.offset += 1000;  // inside its allocation
      const std::int64_t a = static_cast<std::int64_t>(rng() % 2);
      l.segment[k] = segment_of(sb, a);
      EXPECT_EQ(block_of(l.segment[k]), sb);
      walk(sb,
           reinterpret_cast<std::intptr_t>(bases[a]) - reinterpret_cast<std::intptr_t>(bases[0]),
           want);
    }
    const canon::CanonicalForm form = mapped_form(l, bases);
    ASSERT_EQ(static_cast<std::int64_t>(form.pieces.size()), l.segments);
    EXPECT_EQ(walk(form, 0, 1), want);
    EXPECT_EQ(form.size, static_cast<std::int64_t>(want.size()));
  }
}

// A record is followed only when every segment lies in the allocation it names, the bytes add
// up, and its counts are in range.
TEST(DirectLayout, ARecordIsConsistentOnlyInsideItsAllocationsAndWithItsBytes) {
  std::mt19937_64 rng(9);
  for (int i = 0; i < 1000; ++i) {
    const canon::StridedBlock sb = random_block(rng);
    const ByteSpan span = touched_bytes(sb, 0, 1);
    canon::StridedBlock placed = sb;
    placed.offset -= span.lo;  // the first touched byte at the allocation's base
    DirectLayout l;
    l.segments = 1;
    l.allocations = 1;
    l.segment[0] = segment_of(placed, 0);
    l.allocation[0].bytes = span.hi - span.lo;  // the last one at its end
    const std::int64_t bytes = sb.packed_bytes();
    EXPECT_TRUE(consistent(l, bytes));
    EXPECT_FALSE(consistent(l, bytes + 1));
    DirectLayout low = l;
    low.segment[0].offset -= 1;
    EXPECT_FALSE(consistent(low, bytes));
    DirectLayout high = l;
    high.allocation[0].bytes -= 1;
    EXPECT_FALSE(consistent(high, bytes));
    DirectLayout elsewhere = l;
    elsewhere.segment[0].allocation = 1;  // an allocation the record does not name
    EXPECT_FALSE(consistent(elsewhere, bytes));
  }
  DirectLayout l;
  l.segments = l.allocations = 1;
  l.segment[0] = segment_of({0, 8, {{4, 16}}}, 0);
  l.allocation[0].bytes = 1 << 10;
  EXPECT_TRUE(consistent(l, 32));
  DirectLayout bad = l;
  bad.segment[0].dims = static_cast<std::int64_t>(canon::kMaxDims) + 1;
  EXPECT_FALSE(consistent(bad, 32));
  bad = l;
  bad.segment[0].dim[0] = 0;  // a dim of no elements
  EXPECT_FALSE(consistent(bad, 0));
  bad = l;
  bad.segments = static_cast<std::int64_t>(DirectPolicy::kMaxSegments) + 1;
  EXPECT_FALSE(consistent(bad, 32));
  bad = l;
  bad.allocations = 0;
  EXPECT_FALSE(consistent(bad, 32));
}

}  // namespace
}  // namespace strider::ipc
