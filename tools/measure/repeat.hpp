// Repeating a timed operation until its median is stable enough, within a time budget.
#pragma once

#include <functional>
#include <vector>

namespace strider::measure {

struct RepeatLimits {
  int warmup = 2;
  int min_reps = 7;
  int max_reps = 100;
  double max_seconds = 0.05;  // stop once min_reps are done and this much time has gone
};

// Median of `samples` (copied: the caller's order is kept). 0 for none.
double median(std::vector<double> samples);

// Calls `once()` (which returns the seconds one repetition took) warmup times untimed, then
// until the limits say stop; returns the median.
double repeat_median(const std::function<double()>& once, const RepeatLimits& limits);

// The repetitions a two-rank exchange of `bytes` gets: both ranks must agree without talking,
// so the count is a function of the size alone (fewer for larger messages).
int exchange_reps(double bytes, const RepeatLimits& limits);

}  // namespace strider::measure
