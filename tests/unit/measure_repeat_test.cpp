// strider-measure's statistics and progress text (CPU only).
#include <gtest/gtest.h>

#include "measure/progress.hpp"
#include "measure/repeat.hpp"

namespace strider::measure {
namespace {

TEST(MeasureRepeat, MedianOfOddAndEvenCountsAndNone) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(median({5}), 5);
  EXPECT_EQ(median({9, 1, 5}), 5);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({1, 1000, 2, 3, 1e9}), 3);  // outliers do not move it
}

TEST(MeasureRepeat, StopsAtMaxRepsAndNeverBelowMinReps) {
  int calls = 0;
  const RepeatLimits limits{2, 7, 20, 1e9};
  repeat_median(
      [&] {
        ++calls;
        return 1e-9;
      },
      limits);
  EXPECT_EQ(calls, 2 + 20);  // the budget is never reached: max_reps stops it
  calls = 0;
  const RepeatLimits slow{1, 7, 100, 1e-3};
  repeat_median(
      [&] {
        ++calls;
        return 1.0;
      },
      slow);
  EXPECT_EQ(calls, 1 + 7);  // over budget at once, but min_reps are kept
}

TEST(MeasureRepeat, ReturnsTheMedianOfTheTimedRepetitionsOnly) {
  std::vector<double> values{100, 100, 3, 1, 2};  // two warm-ups, then 3 timed
  std::size_t next = 0;
  EXPECT_EQ(repeat_median([&] { return values[next++]; }, {2, 3, 3, 1e9}), 2);
}

TEST(MeasureRepeat, ExchangeRepsShrinkWithSizeWithinTheLimits) {
  const RepeatLimits limits{2, 7, 100, 0.05};
  int previous = limits.max_reps;
  for (double bytes = 1; bytes <= 64.0 * 1024 * 1024; bytes *= 4) {
    const int reps = exchange_reps(bytes, limits);
    EXPECT_GE(reps, limits.min_reps);
    EXPECT_LE(reps, previous);
    previous = reps;
  }
  EXPECT_EQ(exchange_reps(1, limits), limits.max_reps);
  EXPECT_EQ(exchange_reps(1e12, limits), limits.min_reps);
}

TEST(MeasureProgress, FormatsDurations) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(42.4), "42s");
  EXPECT_EQ(format_duration(65), "1m05s");
  EXPECT_EQ(format_duration(-3), "0s");
}

}  // namespace
}  // namespace strider::measure
