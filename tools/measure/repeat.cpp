#include "measure/repeat.hpp"

#include <algorithm>
#include <chrono>

namespace strider::measure {

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  const std::size_t mid = samples.size() / 2;
  std::nth_element(samples.begin(), samples.begin() + mid, samples.end());
  if (samples.size() % 2 == 1) return samples[mid];
  const double upper = samples[mid];
  return (upper + *std::max_element(samples.begin(), samples.begin() + mid)) / 2;
}

double repeat_median(const std::function<double()>& once, const RepeatLimits& limits) {
  for (int i = 0; i < limits.warmup; ++i) once();
  std::vector<double> samples;
  double spent = 0;
  while (static_cast<int>(samples.size()) < limits.max_reps &&
         (static_cast<int>(samples.size()) < limits.min_reps || spent < limits.max_seconds)) {
    samples.push_back(once());
    spent += samples.back();
  }
  return median(samples);
}

int exchange_reps(double bytes, const RepeatLimits& limits) {
  // About max_seconds of exchanges at an assumed 5 GB/s, within [min_reps, max_reps].
  const double expected = 5e-6 + bytes / 5e9;
  const int reps = static_cast<int>(limits.max_seconds / expected);
  return std::clamp(reps, limits.min_reps, limits.max_reps);
}

}  // namespace strider::measure
