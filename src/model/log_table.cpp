#include "model/log_table.hpp"

#include <algorithm>
#include <cmath>

namespace strider::model {

AxisPosition locate(const std::vector<double>& points, double x) {
  if (points.size() < 2 || !(x > points.front())) return {0, 0.0};  // NaN clamps low too
  if (x >= points.back()) return {points.size() - 2, 1.0};
  const auto upper = std::upper_bound(points.begin(), points.end(), x);
  const std::size_t lower = static_cast<std::size_t>(upper - points.begin()) - 1;
  const double lo = std::log(points[lower]);
  const double hi = std::log(points[lower + 1]);
  return {lower, (std::log(x) - lo) / (hi - lo)};
}

double log_mix(double a, double b, double weight) {
  if (weight <= 0) return a;
  if (weight >= 1) return b;
  return std::exp(std::log(a) * (1 - weight) + std::log(b) * weight);
}

double Table1D::at(double x_value) const {
  if (x.size() == 1) return y.front();
  const AxisPosition p = locate(x, x_value);
  return log_mix(y[p.lower], y[p.lower + 1], p.weight);
}

double Table2D::at(double row, double column) const {
  const std::size_t n = columns.size();
  auto value = [&](std::size_t r, std::size_t c) { return values[r * n + c]; };
  auto along_columns = [&](std::size_t r) {
    if (n == 1) return value(r, 0);
    const AxisPosition c = locate(columns, column);
    return log_mix(value(r, c.lower), value(r, c.lower + 1), c.weight);
  };
  if (rows.size() == 1) return along_columns(0);
  const AxisPosition r = locate(rows, row);
  return log_mix(along_columns(r.lower), along_columns(r.lower + 1), r.weight);
}

namespace {

std::string check_axis(const std::vector<double>& axis, const std::string& what) {
  if (axis.empty()) return what + ": empty axis";
  for (std::size_t i = 0; i < axis.size(); ++i) {
    if (!std::isfinite(axis[i]) || axis[i] <= 0) return what + ": axis value not positive";
    if (i > 0 && axis[i] <= axis[i - 1]) return what + ": axis not strictly ascending";
  }
  return {};
}

std::string check_values(const std::vector<double>& values, const std::string& what) {
  for (double v : values) {
    if (!std::isfinite(v) || v <= 0) return what + ": a time that is not positive and finite";
  }
  return {};
}

}  // namespace

std::string validate(const Table1D& table, const std::string& what) {
  if (auto e = check_axis(table.x, what); !e.empty()) return e;
  if (table.y.size() != table.x.size()) return what + ": " + "as many times as sizes expected";
  return check_values(table.y, what);
}

std::string validate(const Table2D& table, const std::string& what) {
  if (auto e = check_axis(table.rows, what + " (rows)"); !e.empty()) return e;
  if (auto e = check_axis(table.columns, what + " (columns)"); !e.empty()) return e;
  if (table.values.size() != table.rows.size() * table.columns.size()) {
    return what + ": rows x columns times expected";
  }
  return check_values(table.values, what);
}

}  // namespace strider::model
