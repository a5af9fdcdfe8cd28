// A progress bar with an estimate of the time left, on stderr of one rank. Work items carry
// weights (roughly proportional to their expected time) so the estimate holds when large
// items come last. Without a terminal, a line every 10%.
#pragma once

#include <chrono>
#include <string>

namespace strider::measure {

class Progress {
 public:
  Progress(double total_weight, bool enabled);
  // Marks `weight` more done; `what` names the current phase.
  void advance(double weight, const std::string& what);
  void finish();
  double elapsed_seconds() const;

 private:
  void draw(const std::string& what);
  double total_;
  double done_ = 0;
  bool enabled_;
  bool tty_;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_;
};

// "1m05s", "42s".
std::string format_duration(double seconds);

}  // namespace strider::measure
