#include "measure/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace strider::measure {

std::string format_duration(double seconds) {
  const long s = std::max(0L, static_cast<long>(seconds + 0.5));
  char text[32];
  if (s >= 60) {
    std::snprintf(text, sizeof text, "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%lds", s);
  }
  return text;
}

Progress::Progress(double total_weight, bool enabled)
    : total_(std::max(total_weight, 1e-9)),
      enabled_(enabled),
      tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()) {}

double Progress::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::advance(double weight, const std::string& what) {
  done_ = std::min(total_, done_ + weight);
  if (enabled_) draw(what);
}

void Progress::draw(const std::string& what) {
  const double fraction = done_ / total_;
  const double elapsed = elapsed_seconds();
  const std::string eta = done_ > 0 ? format_duration(elapsed * (total_ - done_) / done_) : "?";
  if (tty_) {
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(fraction * kWidth);
    std::fprintf(stderr, "\r[%s%s] %3d%%  %s elapsed, ~%s left  %-32.32s",
                 std::string(static_cast<std::size_t>(filled), '#').c_str(),
                 std::string(static_cast<std::size_t>(kWidth - filled), '.').c_str(),
                 static_cast<int>(fraction * 100), format_duration(elapsed).c_str(), eta.c_str(),
                 what.c_str());
    std::fflush(stderr);
    return;
  }
  const int decile = static_cast<int>(fraction * 10);
  if (decile != last_decile_) {
    last_decile_ = decile;
    std::fprintf(stderr, "strider-measure: %3d%%  %s elapsed, ~%s left  (%s)\n", decile * 10,
                 format_duration(elapsed).c_str(), eta.c_str(), what.c_str());
  }
}

void Progress::finish() {
  if (enabled_ && tty_) std::fprintf(stderr, "\n");
  if (enabled_) {
    std::fprintf(stderr, "strider-measure: done in %s\n",
                 format_duration(elapsed_seconds()).c_str());
  }
}

}  // namespace strider::measure
