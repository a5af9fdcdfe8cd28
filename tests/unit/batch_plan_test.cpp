// The batch plan on the host: random batches of packs, unpacks and layout-to-layout copies
// (strided forms and block lists, mixed word sizes) planned into one job table and run by the
// host emulation of the kernel's blocks and threads, against the host engine.
#include "engine/cuda/batch_plan.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "batch_cases.hpp"

namespace strider::engine::cuda {
namespace {

using strider::testing::BatchCase;

// The block lists' tables, built on the host where the emulation reads them.
class HostTables {
 public:
  void fill(BatchShape& shape) {
    for (CopyShape& c : shape.copies) {
      for (SideShape* side : {&c.from, &c.to}) {
        if (side->kind != MapKind::List) continue;
        tables_.push_back(shape.wide ? list_table<Divmod64>(*side->form, c.word)
                                     : list_table<FastDivmod32>(*side->form, c.word));
        side->table = tables_.back().data();
      }
    }
  }

 private:
  std::deque<std::vector<std::byte>> tables_;
};

struct Counts {
  std::map<int, int> words;
  int strided = 0, lists = 0, contiguous = 0;
};

// Plans and emulates one batch case; false (with a failure) when the destinations differ.
void run_case(BatchCase& c, bool force_wide, int multiprocessors, Counts& counts) {
  const auto copies = c.bind(c.source().data(), c.dest().data());
  std::memcpy(c.dest().data(), c.dest_before().data(), c.dest_before().size());
  BatchShape shape;
  ASSERT_EQ(shape_batch(copies, 16, shape, force_wide), BatchStatus::Ok);
  ASSERT_EQ(shape.wide, force_wide);  // the cases are small
  HostTables tables;
  tables.fill(shape);
  std::uint64_t words = 0;
  for (const CopyShape& cs : shape.copies) {
    words += cs.words;
    ++counts.words[cs.word];
    for (const SideShape* side : {&cs.from, &cs.to}) {
      (side->kind == MapKind::List      ? counts.lists
       : side->kind == MapKind::Strided ? counts.strided
                                        : counts.contiguous)++;
    }
  }
  const std::size_t bytes = batch_table_bytes(shape);
  ASSERT_LE(bytes, batch_table_bound(copies.size()));
  std::vector<std::byte> table(bytes);
  const BatchPlan plan = plan_batch(shape, multiprocessors, table);
  ASSERT_EQ(plan.bytes, bytes);
  ASSERT_EQ(plan.jobs, static_cast<int>(shape.copies.size()));
  ASSERT_GE(plan.grid, static_cast<unsigned>(plan.jobs));
  // Every word moved once, and the destinations as the host engine leaves them.
  EXPECT_EQ(emulate_batch(plan, table.data()), words);
  const std::byte* got = c.dest().data();
  const std::vector<std::byte>& want = c.expected();
  std::size_t first_bad = 0;
  while (first_bad < want.size() && got[first_bad] == want[first_bad]) ++first_bad;
  EXPECT_EQ(first_bad, want.size()) << "first wrong destination byte " << first_bad;
}

TEST(BatchPlan, MixedBatchesMatchTheHostEngine) {
  std::mt19937_64 rng(2024);
  Counts counts;
  for (int t = 0; t < 300; ++t) {
    BatchCase c(rng, 1 + t % 24, BatchCase::Mix::Any);
    run_case(c, t % 3 == 0, 1 + t % 132, counts);
    if (HasFailure()) {
      std::printf("batch %d\n", t);
      return;
    }
  }
  for (const auto& [word, n] : counts.words) std::printf("word %2d: %d copies\n", word, n);
  std::printf("sides: strided %d, lists %d, contiguous %d\n", counts.strided, counts.lists,
              counts.contiguous);
  for (int w : {1, 2, 4, 8, 16}) EXPECT_GT(counts.words[w], 0) << "no copy of word " << w;
  EXPECT_GT(counts.lists, 200);
  EXPECT_GT(counts.strided, 200);
}

TEST(BatchPlan, SelfCopiesBetweenFormsOfEqualSize) {
  std::mt19937_64 rng(7);
  Counts counts;
  for (int t = 0; t < 200; ++t) {
    BatchCase c(rng, 1 + t % 8, BatchCase::Mix::Self);
    run_case(c, t % 2 == 1, 132, counts);
    if (HasFailure()) return;
  }
  EXPECT_GT(counts.lists, 50);
}

// A halo's 26 x 8 jobs.
TEST(BatchPlan, AHalosJobs) {
  std::mt19937_64 rng(11);
  Counts counts;
  BatchCase c(rng, 208, BatchCase::Mix::Pack);
  run_case(c, false, 4, counts);
}

// Jobs over the grid limit share it in proportion to their words, each keeping a block.
TEST(BatchPlan, HugeJobsShareTheGridLimit) {
  BatchShape shape;
  shape.wide = true;
  for (std::uint64_t words : {std::uint64_t{1} << 40, std::uint64_t{1} << 39, std::uint64_t{5}}) {
    CopyShape c;
    c.word = 1;
    c.words = words;
    shape.copies.push_back(c);
  }
  std::vector<std::byte> table(batch_table_bytes(shape));
  const BatchPlan plan = plan_batch(shape, 132, table);
  ASSERT_EQ(plan.jobs, 3);
  std::vector<BatchJob> jobs(3);
  std::memcpy(jobs.data(), table.data(), sizeof(BatchJob) * 3);
  EXPECT_LE(plan.grid, (1u << 30) + 3);
  EXPECT_EQ(jobs[0].first_block, 0u);
  EXPECT_EQ(jobs[1].first_block, jobs[0].blocks);
  EXPECT_EQ(jobs[2].first_block, jobs[0].blocks + jobs[1].blocks);
  EXPECT_EQ(plan.grid, jobs[2].first_block + jobs[2].blocks);
  EXPECT_EQ(jobs[0].blocks, jobs[1].blocks);  // both wanted the per-job cap
  EXPECT_GE(jobs[2].blocks, 1u);
}

TEST(BatchPlan, EmptyCopiesAreSkippedAndSizesMustAgree) {
  std::vector<std::byte> a(64), b(64);
  std::vector<BatchCopy> copies{
      {{nullptr, 0, nullptr, 0, a.data()}, {nullptr, 0, nullptr, 0, b.data()}}};
  BatchShape shape;
  ASSERT_EQ(shape_batch(copies, 16, shape), BatchStatus::Ok);
  EXPECT_TRUE(shape.copies.empty());
  std::vector<std::byte> table(batch_table_bytes(shape));
  EXPECT_EQ(plan_batch(shape, 132, table).grid, 0u);
  copies[0].to.count = 8;
  EXPECT_EQ(shape_batch(copies, 16, shape), BatchStatus::SizeMismatch);
  // A contiguous copy of 48 bytes between 16-byte aligned bases: 16-byte words, unless capped.
  copies[0].from.count = 48;
  copies[0].to.count = 48;
  ASSERT_EQ(shape_batch(copies, 4, shape), BatchStatus::Ok);
  ASSERT_EQ(shape.copies.size(), 1u);
  EXPECT_LE(shape.copies[0].word, 4);
}

}  // namespace
}  // namespace strider::engine::cuda
