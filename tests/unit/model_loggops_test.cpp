// The LogGOPS fit: the weighted line fit and its clamps, recovery of known parameters from
// synthetic timings, latency and per-byte gap from the ping-pong beyond the overheads, and
// the printed table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "model/loggops.hpp"

namespace strider::model {
namespace {

::testing::AssertionResult RelNear(double a, double b, double rel) {
  if (std::abs(a - b) <= rel * std::abs(b)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << a << " vs " << b << " (relative error " << std::abs(a - b) / std::abs(b) << ")";
}

TEST(ModelFitRelative, RecoversAnExactLine) {
  const std::vector<double> x = {1, 10, 100, 1000};
  std::vector<double> y;
  for (double v : x) y.push_back(2 + 3 * v);
  const LinearFit f = fit_relative(x, y);
  EXPECT_TRUE(RelNear(f.a, 2, 1e-12));
  EXPECT_TRUE(RelNear(f.b, 3, 1e-12));
}

TEST(ModelFitRelative, RecoversAnExactLineOverTheMeasuredSizeRange) {
  // Sizes 1 .. 64 Mi with a microsecond-scale intercept: y spans six orders of magnitude.
  std::vector<double> x, y;
  for (double s = 1; s <= 64.0 * 1024 * 1024; s *= 2) {
    x.push_back(s);
    y.push_back(4e-6 + 1.25e-10 * s);
  }
  const LinearFit f = fit_relative(x, y);
  EXPECT_TRUE(RelNear(f.a, 4e-6, 1e-9));
  EXPECT_TRUE(RelNear(f.b, 1.25e-10, 1e-9));
}

TEST(ModelFitRelative, ConstantDataGivesZeroSlope) {
  const LinearFit f = fit_relative({1, 2, 4, 8}, {5e-6, 5e-6, 5e-6, 5e-6});
  EXPECT_TRUE(RelNear(f.a, 5e-6, 1e-12));
  EXPECT_EQ(f.b, 0);
}

TEST(ModelFitRelative, DecreasingDataClampsTheSlopeToZeroAndTakesTheWeightedMean) {
  // y = 3, 2, 1 at x = 1, 2, 3: the fitted slope is negative. With w = 1/y^2 the weighted
  // mean is (1/3 + 1/2 + 1) / (1/9 + 1/4 + 1) = (11/6) / (49/36) = 66/49.
  const LinearFit f = fit_relative({1, 2, 3}, {3, 2, 1});
  EXPECT_EQ(f.b, 0);
  EXPECT_TRUE(RelNear(f.a, 66.0 / 49.0, 1e-14));
}

TEST(ModelFitRelative, NegativeInterceptClampsToZeroAndFitsThroughTheOrigin) {
  // y = x - 1 at x = 2, 3, 5 (y = 1, 2, 4): intercept -1. Through the origin, weighted least
  // squares gives b = sum(w x y) / sum(w x^2) = (2 + 6/4 + 20/16) / (4 + 9/4 + 25/16) = 76/125.
  const LinearFit f = fit_relative({2, 3, 5}, {1, 2, 4});
  EXPECT_EQ(f.a, 0);
  EXPECT_TRUE(RelNear(f.b, 76.0 / 125.0, 1e-14));
}

TEST(ModelFitRelative, OneDistinctSizeGivesTheWeightedMeanAndNoSlope) {
  // w = 1, 1/4, 1/16: (1 + 1/2 + 1/4) / (21/16) = 4/3.
  const LinearFit f = fit_relative({5, 5, 5}, {1, 2, 4});
  EXPECT_EQ(f.b, 0);
  EXPECT_TRUE(RelNear(f.a, 4.0 / 3.0, 1e-14));
}

TEST(ModelFitRelative, NonPositiveTimesAreIgnored) {
  // The two bad samples would pull the line anywhere if they counted.
  const LinearFit f = fit_relative({1, 2, 3, 4, 5}, {3, 0, 7, -100, 11});  // 1 + 2x elsewhere
  EXPECT_TRUE(RelNear(f.a, 1, 1e-12));
  EXPECT_TRUE(RelNear(f.b, 2, 1e-12));
}

TEST(ModelFitRelative, NothingUsableGivesZero) {
  const LinearFit none = fit_relative({}, {});
  EXPECT_EQ(none.a, 0);
  EXPECT_EQ(none.b, 0);
  const LinearFit bad = fit_relative({1, 2}, {0, -1});
  EXPECT_EQ(bad.a, 0);
  EXPECT_EQ(bad.b, 0);
}

TEST(ModelFitRelative, WeightsMakeTheFitRelative) {
  // A 10% error on the largest sample (about 100 us off) barely moves the 1 us intercept, which
  // the small samples set: under 1%. An unweighted fit would move it by far more than 1 us.
  std::vector<double> x, y;
  for (double s = 1; s <= 1 << 20; s *= 4) {
    x.push_back(s);
    y.push_back(1e-6 + 1e-9 * s);
  }
  y.back() *= 1.1;
  const LinearFit f = fit_relative(x, y);
  EXPECT_TRUE(RelNear(f.a, 1e-6, 1e-2)) << f.a;
  EXPECT_GT(f.b, 1e-9);  // the slope absorbs the error
}

TEST(ModelLogGops, PredictIsTheDocumentedFormula) {
  LogGops p;
  p.o_s = 1;
  p.O_s = 2;
  p.L = 3;
  p.g = 100;  // per-message gap: not part of a single message's time
  p.G = 5;
  p.o_r = 7;
  p.O_r = 11;
  // T(s) = o_s + O_s s + L + G (s - 1) + o_r + O_r s
  EXPECT_EQ(p.predict(1), 1 + 2 + 3 + 0 + 7 + 11);
  EXPECT_EQ(p.predict(10), 1 + 20 + 3 + 45 + 7 + 110);
  EXPECT_EQ(p.predict(0), 1 + 3 + 7);  // G (s - 1) never negative
}

struct Truth {
  double o_s = 2.5e-6, O_s = 1.0e-10, o_r = 3.25e-6, O_r = 2.0e-10, g = 1.5e-6, G = 8.0e-11,
         L = 1.75e-6;
};

// Noiseless timings generated from `t` for sizes 1, 2, 4, ..., 64 Mi.
std::vector<LogGopsSample> Synthetic(const Truth& t) {
  std::vector<LogGopsSample> out;
  for (double s = 1; s <= 64.0 * 1024 * 1024; s *= 2) {
    LogGopsSample x;
    x.bytes = s;
    x.send_overhead = t.o_s + t.O_s * s;
    x.recv_overhead = t.o_r + t.O_r * s;
    x.stream_gap = t.g + t.G * s;
    x.pingpong = t.o_s + t.O_s * s + t.L + t.G * (s - 1) + t.o_r + t.O_r * s;
    out.push_back(x);
  }
  return out;
}

TEST(ModelFitLogGops, RecoversEveryParameterFromNoiselessSamples) {
  const Truth t;
  const LogGops f = fit_loggops(Synthetic(t));
  EXPECT_TRUE(RelNear(f.o_s, t.o_s, 1e-9));
  EXPECT_TRUE(RelNear(f.O_s, t.O_s, 1e-9));
  EXPECT_TRUE(RelNear(f.o_r, t.o_r, 1e-9));
  EXPECT_TRUE(RelNear(f.O_r, t.O_r, 1e-9));
  EXPECT_TRUE(RelNear(f.g, t.g, 1e-9));
  EXPECT_TRUE(RelNear(f.G, t.G, 1e-9));
  EXPECT_TRUE(RelNear(f.L, t.L, 1e-9));
}

TEST(ModelFitLogGops, RecoversParametersOfOtherMagnitudesAndSampleOrders) {
  // A slow network (L of 20 us, 1 GB/s) with samples in shuffled order.
  Truth t;
  t.o_s = 8e-7;
  t.O_s = 3e-11;
  t.o_r = 9e-7;
  t.O_r = 4e-11;
  t.g = 2e-6;
  t.G = 1e-9;
  t.L = 2e-5;
  std::vector<LogGopsSample> samples = Synthetic(t);
  const unsigned seed = 4242;
  std::shuffle(samples.begin(), samples.end(), std::mt19937(seed));
  const LogGops f = fit_loggops(samples);
  EXPECT_TRUE(RelNear(f.o_s, t.o_s, 1e-9)) << "seed " << seed;
  EXPECT_TRUE(RelNear(f.O_s, t.O_s, 1e-9));
  EXPECT_TRUE(RelNear(f.o_r, t.o_r, 1e-9));
  EXPECT_TRUE(RelNear(f.O_r, t.O_r, 1e-9));
  EXPECT_TRUE(RelNear(f.g, t.g, 1e-9));
  EXPECT_TRUE(RelNear(f.G, t.G, 1e-9));
  EXPECT_TRUE(RelNear(f.L, t.L, 1e-9));
}

TEST(ModelFitLogGops, LatencyAndPerByteGapComeFromThePingPongBeyondTheOverheads) {
  // The stream's per-byte slope differs from the wire's: G must be the ping-pong's (what the
  // wire adds beyond both overheads), g the stream's per-message intercept.
  const Truth t;
  std::vector<LogGopsSample> samples = Synthetic(t);
  for (LogGopsSample& x : samples) x.stream_gap = t.g + 5 * t.G * x.bytes;
  const LogGops f = fit_loggops(samples);
  EXPECT_TRUE(RelNear(f.G, t.G, 1e-9)) << f.G;
  EXPECT_TRUE(RelNear(f.L, t.L, 1e-9)) << f.L;
  EXPECT_TRUE(RelNear(f.g, t.g, 1e-9)) << f.g;
}

TEST(ModelFitLogGops, AConstantExtraDelayInThePingPongMovesOnlyTheLatency) {
  const Truth t;
  std::vector<LogGopsSample> samples = Synthetic(t);
  for (LogGopsSample& x : samples) x.pingpong += 4e-6;
  const LogGops f = fit_loggops(samples);
  EXPECT_TRUE(RelNear(f.L, t.L + 4e-6, 1e-9)) << f.L;
  EXPECT_TRUE(RelNear(f.G, t.G, 1e-9)) << f.G;
  EXPECT_TRUE(RelNear(f.o_s, t.o_s, 1e-9));  // the ping-pong does not enter the other fits
  EXPECT_TRUE(RelNear(f.O_r, t.O_r, 1e-9));
}

TEST(ModelFitLogGops, OverheadsThatExplainThePingPongLeaveNoLatencyOrGap) {
  // On shared memory the receiver's copy is the transfer: the overheads account for all of
  // the ping-pong, and neither L nor G may go negative.
  const Truth t;
  std::vector<LogGopsSample> samples = Synthetic(t);
  for (LogGopsSample& x : samples) {
    x.pingpong = 0.9 * (x.send_overhead + x.recv_overhead);  // even a little less than both
  }
  const LogGops f = fit_loggops(samples);
  EXPECT_GE(f.L, 0);
  EXPECT_GE(f.G, 0);
  EXPECT_LT(f.L, 1e-12);
}

TEST(ModelFitLogGops, NoSamplesGivesAllZero) {
  const LogGops f = fit_loggops({});
  EXPECT_EQ(f.o_s, 0);
  EXPECT_EQ(f.O_s, 0);
  EXPECT_EQ(f.L, 0);
  EXPECT_EQ(f.g, 0);
  EXPECT_EQ(f.G, 0);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(ModelDescribe, OneLinePerSampleAfterTheParametersAndTheHeader) {
  const Truth t;
  const std::vector<LogGopsSample> samples = Synthetic(t);
  const LogGops f = fit_loggops(samples);
  const std::vector<std::string> lines = Lines(describe("oneshot", f, samples));
  ASSERT_EQ(lines.size(), samples.size() + 2);
  EXPECT_EQ(lines[0].rfind("oneshot: ", 0), 0u) << lines[0];  // the name heads it
  EXPECT_NE(lines[1].find("bytes"), std::string::npos);
  // Sample lines in sample order, each starting with its size; a perfect fit shows 0.0% error.
  for (std::size_t i = 0; i < samples.size(); ++i) {
    std::istringstream line(lines[i + 2]);
    double bytes = 0, measured_us = 0, predicted_us = 0;
    line >> bytes >> measured_us >> predicted_us;
    EXPECT_EQ(bytes, samples[i].bytes) << lines[i + 2];
    EXPECT_NEAR(measured_us, samples[i].pingpong * 1e6, 0.006) << lines[i + 2];
    EXPECT_NE(lines[i + 2].find("0.0%"), std::string::npos) << lines[i + 2];
  }
}

TEST(ModelDescribe, ParametersAreInMicrosecondsAndNanosecondsPerByte) {
  LogGops f;
  f.o_s = 2e-6;
  f.O_s = 0.5e-9;
  f.L = 1.25e-6;
  const std::string text = describe("host", f, {});
  EXPECT_EQ(Lines(text).size(), 2u);  // no samples: just the parameters and the header
  EXPECT_NE(text.find("o_s 2.000 us"), std::string::npos) << text;
  EXPECT_NE(text.find("O_s 0.5000 ns/B"), std::string::npos) << text;
  EXPECT_NE(text.find("L 1.250 us"), std::string::npos) << text;
}

TEST(ModelDescribe, ReportsTheRelativeErrorOfEachSample) {
  LogGops f;
  f.L = 1.1e-5;  // predicts 11 us for every size
  const std::vector<LogGopsSample> samples = {{8, 0, 0, 0, 1e-5}};
  const std::vector<std::string> lines = Lines(describe("x", f, samples));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[2].find("+10.0%"), std::string::npos) << lines[2];
}

}  // namespace
}  // namespace strider::model
