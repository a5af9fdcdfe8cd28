#include "model/loggops.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace strider::model {

double LogGops::predict(double s) const {
  return o_s + O_s * s + L + G * std::max(0.0, s - 1) + o_r + O_r * s;
}

LinearFit fit_relative(const std::vector<double>& x, const std::vector<double>& y) {
  // Weighted normal equations for y = a + b x with w = 1/y^2.
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (!(y[i] > 0)) continue;
    const double w = 1 / (y[i] * y[i]);
    sw += w;
    sx += w * x[i];
    sy += w * y[i];
    sxx += w * x[i] * x[i];
    sxy += w * x[i] * y[i];
  }
  const double det = sw * sxx - sx * sx;
  LinearFit f;
  if (sw == 0) return f;
  if (std::abs(det) <= 1e-12 * sw * sxx) {
    f.a = sy / sw;
    return f;
  }
  f.b = (sw * sxy - sx * sy) / det;
  f.a = (sy - f.b * sx) / sw;
  if (f.b < 0) {  // a decreasing fit means no per-byte term: the mean
    f.b = 0;
    f.a = sy / sw;
  }
  if (f.a < 0) {  // no per-message term: the slope through the origin
    f.a = 0;
    f.b = sxx > 0 ? sxy / sxx : 0;
  }
  return f;
}

LogGops fit_loggops(const std::vector<LogGopsSample>& samples) {
  std::vector<double> s, send, recv, gap;
  for (const LogGopsSample& x : samples) {
    s.push_back(x.bytes);
    send.push_back(x.send_overhead);
    recv.push_back(x.recv_overhead);
    gap.push_back(x.stream_gap);
  }
  LogGops f;
  const LinearFit fs = fit_relative(s, send), fr = fit_relative(s, recv), fg = fit_relative(s, gap);
  f.o_s = fs.a;
  f.O_s = fs.b;
  f.o_r = fr.a;
  f.O_r = fr.b;
  f.g = fg.a;
  // f.L and f.G are still 0 here, so predict() is the two overheads alone.
  std::vector<double> wire_bytes, wire;
  for (const LogGopsSample& x : samples) {
    wire_bytes.push_back(std::max(0.0, x.bytes - 1));
    wire.push_back(x.pingpong - f.predict(x.bytes));
  }
  const LinearFit fw = fit_relative(wire_bytes, wire);
  f.L = fw.a;
  f.G = fw.b;
  return f;
}

std::string describe(const std::string& name, const LogGops& f,
                     const std::vector<LogGopsSample>& samples) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line,
                "%s: o_s %.3f us  O_s %.4f ns/B  o_r %.3f us  O_r %.4f ns/B  L %.3f us  "
                "g %.3f us  G %.4f ns/B\n",
                name.c_str(), f.o_s * 1e6, f.O_s * 1e9, f.o_r * 1e6, f.O_r * 1e9, f.L * 1e6,
                f.g * 1e6, f.G * 1e9);
  out += line;
  std::snprintf(line, sizeof line, "  %12s %14s %14s %9s\n", "bytes", "measured us", "predicted us",
                "error");
  out += line;
  for (const LogGopsSample& x : samples) {
    const double p = f.predict(x.bytes);
    std::snprintf(line, sizeof line, "  %12.0f %14.2f %14.2f %+8.1f%%\n", x.bytes, x.pingpong * 1e6,
                  p * 1e6, 100 * (p - x.pingpong) / x.pingpong);
    out += line;
  }
  return out;
}

}  // namespace strider::model
