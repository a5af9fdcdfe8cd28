// Log-log tables: where a size falls on an axis, interpolation (exact for power laws, clamped
// outside the measured range) and the checks a loaded table must pass.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "model/log_table.hpp"

namespace strider::model {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// |a - b| within `rel` of |b|: interpolation goes through log and exp, so exact in theory,
// a few ulps in practice.
::testing::AssertionResult RelNear(double a, double b, double rel = 1e-12) {
  if (std::abs(a - b) <= rel * std::abs(b)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << a << " vs " << b << " (relative error " << std::abs(a - b) / std::abs(b) << ")";
}

bool Mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const std::vector<double> kAxis = {1, 4, 16, 64, 1024};

TEST(ModelLocate, BelowOrAtTheFirstPointIsThatPointWithWeightZero) {
  for (double x : {1e-9, 0.5, 1.0}) {
    const AxisPosition p = locate(kAxis, x);
    EXPECT_EQ(p.lower, 0u) << x;
    EXPECT_EQ(p.weight, 0.0) << x;
  }
}

TEST(ModelLocate, AtOrAboveTheLastPointIsTheLastCellWithWeightOne) {
  for (double x : {1024.0, 1025.0, 1e30}) {
    const AxisPosition p = locate(kAxis, x);
    EXPECT_EQ(p.lower, kAxis.size() - 2) << x;
    EXPECT_EQ(p.weight, 1.0) << x;
  }
}

TEST(ModelLocate, InteriorGridPointsHaveWeightZeroInTheirOwnCell) {
  for (std::size_t i = 1; i + 1 < kAxis.size(); ++i) {
    const AxisPosition p = locate(kAxis, kAxis[i]);
    EXPECT_EQ(p.lower, i);
    EXPECT_EQ(p.weight, 0.0);
  }
}

TEST(ModelLocate, WeightIsTheFractionOfTheCellInLogSpace) {
  // 2 is halfway from 1 to 4 in log space; 8 halfway from 4 to 16; 128 a quarter of 64..1024.
  AxisPosition p = locate(kAxis, 2);
  EXPECT_EQ(p.lower, 0u);
  EXPECT_TRUE(RelNear(p.weight, 0.5));
  p = locate(kAxis, 8);
  EXPECT_EQ(p.lower, 1u);
  EXPECT_TRUE(RelNear(p.weight, 0.5));
  p = locate(kAxis, 128);
  EXPECT_EQ(p.lower, 3u);
  EXPECT_TRUE(RelNear(p.weight, 0.25));
  // Just inside a cell: the lower point of that cell, a tiny weight.
  p = locate(kAxis, 16.000001);
  EXPECT_EQ(p.lower, 2u);
  EXPECT_GT(p.weight, 0.0);
  EXPECT_LT(p.weight, 1e-6);
}

TEST(ModelLocate, NaNIsBelowTheRange) {
  // Not the last cell, and no NaN weight: the first point, weight 0.
  const AxisPosition p = locate(kAxis, kNaN);
  EXPECT_EQ(p.lower, 0u);
  EXPECT_EQ(p.weight, 0.0);
  // So tables answer their first value rather than NaN.
  const Table1D t{{1, 4, 16}, {3, 5, 7}};
  EXPECT_EQ(t.at(kNaN), 3);
  const Table2D grid{{1, 4}, {10, 100}, {1, 2, 3, 4}};
  EXPECT_EQ(grid.at(kNaN, kNaN), 1);
  EXPECT_EQ(grid.at(4, kNaN), 3);
  EXPECT_EQ(grid.at(kNaN, 100), 2);
}

TEST(ModelLocate, SinglePointAxisAlwaysAnswersThatPoint) {
  for (double x : {0.1, 5.0, 1e9}) {
    const AxisPosition p = locate({5}, x);
    EXPECT_EQ(p.lower, 0u);
    EXPECT_EQ(p.weight, 0.0);
  }
}

TEST(ModelLogMix, EndpointsAndGeometricMean) {
  EXPECT_EQ(log_mix(2, 8, 0), 2);
  EXPECT_EQ(log_mix(2, 8, 1), 8);
  EXPECT_EQ(log_mix(2, 8, -3), 2);  // weights outside [0, 1] clamp
  EXPECT_EQ(log_mix(2, 8, 7), 8);
  EXPECT_TRUE(RelNear(log_mix(2, 8, 0.5), 4));
  EXPECT_TRUE(RelNear(log_mix(1, 16, 0.25), 2));
  EXPECT_TRUE(RelNear(log_mix(5, 5, 0.3), 5));
}

// y = c * x^k over a log-spaced axis; c and k chosen so the table is not trivially constant.
Table1D PowerLaw1D(const std::vector<double>& xs, double c, double k) {
  Table1D t;
  t.x = xs;
  for (double x : xs) t.y.push_back(c * std::pow(x, k));
  return t;
}

TEST(ModelTable1D, ExactAtEveryGridPoint) {
  const Table1D t{{1, 3, 10, 100}, {7, 2, 5, 0.25}};  // any positive values, not monotone
  for (std::size_t i = 0; i < t.x.size(); ++i) EXPECT_EQ(t.at(t.x[i]), t.y[i]) << i;
}

TEST(ModelTable1D, ExactForPowerLawsBetweenGridPoints) {
  // Log-log linear interpolation reproduces c*x^k exactly, for any exponent (bandwidth k = 1,
  // constant k = 0, and others).
  std::mt19937_64 rng(20240601);
  std::uniform_real_distribution<double> log_x(0, std::log(1 << 20));
  const std::vector<double> xs = {1, 2, 16, 1000, 1 << 20};
  for (double k : {0.0, 1.0, 0.5, -0.7, 2.0}) {
    const Table1D t = PowerLaw1D(xs, 3e-6, k);
    for (int i = 0; i < 200; ++i) {
      const double x = std::exp(log_x(rng));
      EXPECT_TRUE(RelNear(t.at(x), 3e-6 * std::pow(x, k), 1e-10)) << "k " << k << " x " << x;
    }
  }
}

TEST(ModelTable1D, ExactForPiecewisePowerLawsWithDifferentExponentsPerCell) {
  // Cell 1..4 rises as x^1 (1 -> 4), cell 4..16 as x^0.5 (4 -> 8): each cell is its own power law.
  const Table1D t{{1, 4, 16}, {1, 4, 8}};
  EXPECT_TRUE(RelNear(t.at(2), 2));
  EXPECT_TRUE(RelNear(t.at(3), 3));
  EXPECT_TRUE(RelNear(t.at(9), 6));  // 4 * sqrt(9 / 4)
}

TEST(ModelTable1D, ClampedOutsideTheMeasuredRange) {
  const Table1D t = PowerLaw1D({4, 64, 1024}, 1e-6, 1);
  EXPECT_EQ(t.at(1), t.y.front());
  EXPECT_EQ(t.at(0), t.y.front());
  EXPECT_EQ(t.at(-5), t.y.front());
  EXPECT_EQ(t.at(4096), t.y.back());
  EXPECT_EQ(t.at(1e300), t.y.back());
}

TEST(ModelTable1D, SinglePointIsAConstant) {
  const Table1D t{{100}, {2.5}};
  for (double x : {1.0, 100.0, 1e12}) EXPECT_EQ(t.at(x), 2.5);
}

// v = c * r^a * col^b: linear in (log r, log col), so bilinear interpolation in logs is exact.
Table2D PowerLaw2D(const std::vector<double>& rows, const std::vector<double>& cols, double c,
                   double a, double b) {
  Table2D t{rows, cols, {}};
  for (double r : rows) {
    for (double col : cols) t.values.push_back(c * std::pow(r, a) * std::pow(col, b));
  }
  return t;
}

TEST(ModelTable2D, ExactAtEveryGridPointAndRowMajor) {
  const Table2D t{{1, 8}, {10, 100, 1000}, {1, 2, 3, 4, 5, 6}};
  EXPECT_EQ(t.at(1, 10), 1);
  EXPECT_EQ(t.at(1, 100), 2);
  EXPECT_EQ(t.at(1, 1000), 3);
  EXPECT_EQ(t.at(8, 10), 4);
  EXPECT_EQ(t.at(8, 100), 5);
  EXPECT_EQ(t.at(8, 1000), 6);
}

TEST(ModelTable2D, ExactForPowerLawsOffTheGrid) {
  const std::uint64_t seed = 77;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_r(0, std::log(4096.0));
  std::uniform_real_distribution<double> log_c(std::log(64.0), std::log(64.0 * 1024 * 1024));
  std::vector<double> rows, cols;
  for (double r = 1; r <= 4096; r *= 2) rows.push_back(r);
  for (double c = 64; c <= 64.0 * 1024 * 1024; c *= 4) cols.push_back(c);
  for (auto [a, b] : {std::pair{0.0, 1.0}, {-0.5, 1.0}, {0.3, 0.8}, {1.0, 0.0}}) {
    const Table2D t = PowerLaw2D(rows, cols, 2e-9, a, b);
    for (int i = 0; i < 300; ++i) {
      const double r = std::exp(log_r(rng)), c = std::exp(log_c(rng));
      EXPECT_TRUE(RelNear(t.at(r, c), 2e-9 * std::pow(r, a) * std::pow(c, b), 1e-10))
          << "seed " << seed << " a " << a << " b " << b << " at (" << r << ", " << c << ")";
    }
  }
}

TEST(ModelTable2D, EachCoordinateClampsIndependently) {
  const Table2D t{{2, 32}, {100, 10000}, {1, 2, 3, 4}};
  // Row below range: the first row; column above range: the last column.
  EXPECT_EQ(t.at(1, 1e9), 2);
  EXPECT_EQ(t.at(1e9, 1), 3);
  EXPECT_EQ(t.at(0.5, 0.5), 1);
  EXPECT_EQ(t.at(1e9, 1e9), 4);
  // Row clamped, column interpolated: halfway (log) between 100 and 10000 is 1000.
  EXPECT_TRUE(RelNear(t.at(1, 1000), std::sqrt(2.0)));
  EXPECT_TRUE(RelNear(t.at(64, 1000), std::sqrt(12.0)));
}

TEST(ModelTable2D, SingleRowOrSingleColumnInterpolatesAlongTheOtherAxis) {
  const Table2D one_row{{16}, {1, 4}, {3, 12}};
  EXPECT_TRUE(RelNear(one_row.at(1e6, 2), 6));  // any row: the one row; x^1 along columns
  EXPECT_EQ(one_row.at(0.1, 4), 12);
  const Table2D one_column{{1, 100}, {64}, {1, 100}};
  EXPECT_TRUE(RelNear(one_column.at(10, 1), 10));
  EXPECT_EQ(one_column.at(1e5, 1e-5), 100);
  const Table2D one_cell{{8}, {8}, {0.75}};
  EXPECT_EQ(one_cell.at(1, 1e9), 0.75);
}

TEST(ModelValidate, AcceptsWellFormedTables) {
  EXPECT_EQ(validate(Table1D{{1, 2, 4}, {1e-6, 2e-6, 4e-6}}, "t"), "");
  EXPECT_EQ(validate(Table1D{{3}, {1}}, "t"), "");
  EXPECT_EQ(validate(Table2D{{1, 2}, {10, 20, 30}, {1, 2, 3, 4, 5, 6}}, "t"), "");
}

TEST(ModelValidate, RejectsBadAxesIn1DTables) {
  struct Case {
    std::vector<double> x;
    const char* why;
  };
  const Case cases[] = {
      {{}, "empty axis"},
      {{1, 4, 2}, "not strictly ascending"},
      {{1, 2, 2}, "not strictly ascending"},
      {{0, 1, 2}, "not positive"},
      {{-1, 1, 2}, "not positive"},
      {{1, kNaN, 4}, "not positive"},
      {{1, 2, kInf}, "not positive"},
  };
  for (const Case& c : cases) {
    const std::string e = validate(Table1D{c.x, std::vector<double>(c.x.size(), 1.0)}, "copies");
    EXPECT_TRUE(Mentions(e, c.why)) << "'" << e << "' for " << c.why;
    EXPECT_TRUE(Mentions(e, "copies")) << e;  // names the table
  }
}

TEST(ModelValidate, RejectsBadTimesAndSizeMismatchIn1DTables) {
  EXPECT_TRUE(Mentions(validate(Table1D{{1, 2}, {1}}, "t"), "as many times"));
  EXPECT_TRUE(Mentions(validate(Table1D{{1, 2}, {1, 2, 3}}, "t"), "as many times"));
  for (double bad : {0.0, -1e-6, kNaN, kInf}) {
    const std::string e = validate(Table1D{{1, 2}, {1e-6, bad}}, "t");
    EXPECT_TRUE(Mentions(e, "not positive and finite")) << bad << ": '" << e << "'";
  }
}

TEST(ModelValidate, RejectsBadAxesTimesAndSizesIn2DTables) {
  const std::vector<double> six(6, 1.0);
  std::string e = validate(Table2D{{2, 1}, {1, 2, 3}, six}, "pack");
  EXPECT_TRUE(Mentions(e, "rows") && Mentions(e, "ascending")) << e;
  e = validate(Table2D{{1, 2}, {1, 3, 3}, six}, "pack");
  EXPECT_TRUE(Mentions(e, "columns") && Mentions(e, "ascending")) << e;
  e = validate(Table2D{{}, {1, 2, 3}, {}}, "pack");
  EXPECT_TRUE(Mentions(e, "rows") && Mentions(e, "empty")) << e;
  e = validate(Table2D{{1, 2}, {kNaN, 2, 3}, six}, "pack");
  EXPECT_TRUE(Mentions(e, "columns") && Mentions(e, "not positive")) << e;
  e = validate(Table2D{{1, 2}, {1, 2, 3}, {1, 2, 3, 4, 5}}, "pack");
  EXPECT_TRUE(Mentions(e, "rows x columns")) << e;
  for (double bad : {0.0, -2.0, kNaN, kInf}) {
    e = validate(Table2D{{1, 2}, {1, 2, 3}, {1, 1, 1, 1, bad, 1}}, "pack");
    EXPECT_TRUE(Mentions(e, "not positive and finite")) << bad << ": '" << e << "'";
  }
}

}  // namespace
}  // namespace strider::model
