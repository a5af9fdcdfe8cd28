// Tables of measured times over log-spaced axes, and their interpolation. Pure value types.
// Times grow roughly as powers of the sizes between two measured points, so interpolation is
// linear in (log x, log t): exact for a pure bandwidth or a constant, never negative.
// Outside the measured range the coordinates are clamped to the nearest measured point.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace strider::model {

// Where x falls on an ascending axis: cell [lower, lower + 1] and the weight of the upper point
// in log space; a clamped x gets weight 0 or 1. Requires a non-empty axis of positive values.
struct AxisPosition {
  std::size_t lower = 0;
  double weight = 0;  // 0: exactly points[lower]; 1: exactly points[lower + 1]
};
AxisPosition locate(const std::vector<double>& points, double x);

// y(x) sampled at ascending positive x.
struct Table1D {
  std::vector<double> x;
  std::vector<double> y;
  double at(double x_value) const;
  bool empty() const { return x.empty(); }
};

// value(row, column) sampled on a grid: values[r * columns.size() + c].
struct Table2D {
  std::vector<double> rows;
  std::vector<double> columns;
  std::vector<double> values;
  double at(double row, double column) const;
  bool empty() const { return rows.empty(); }
};

// Geometric interpolation between two positive values (weight of `b` in [0, 1]).
double log_mix(double a, double b, double weight);

// Checks shape and ordering: axes strictly ascending and positive, sizes consistent, values
// positive and finite. Returns an empty string when valid, else what is wrong (`what` names it).
std::string validate(const Table1D& table, const std::string& what);
std::string validate(const Table2D& table, const std::string& what);

}  // namespace strider::model
