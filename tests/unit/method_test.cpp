#include "transport/method.hpp"

#include <gtest/gtest.h>

namespace strider::transport {
namespace {

using runtime::MethodChoice;

TEST(Method, ForcedMethodsAreKeptExceptDeviceOnAnUnawareMpi) {
  for (bool aware : {false, true}) {
    for (std::int64_t bytes : {1, 1 << 20}) {
      const TransferShape s{bytes, false};
      EXPECT_EQ(choose_method(MethodChoice::OneShot, aware, s), Method::OneShot);
      EXPECT_EQ(choose_method(MethodChoice::Staged, aware, s), Method::Staged);
      EXPECT_EQ(choose_method(MethodChoice::Device, aware, s),
                aware ? Method::Device : Method::Staged);
    }
  }
}

TEST(Method, AutoNeverHandsDeviceMemoryToAnUnawareMpi) {
  for (std::int64_t bytes = 1; bytes < (std::int64_t{1} << 34); bytes *= 3) {
    for (bool receive : {false, true}) {
      EXPECT_NE(choose_method(MethodChoice::Auto, false, {bytes, receive}), Method::Device);
      EXPECT_EQ(choose_method(MethodChoice::Auto, true, {bytes, receive}), Method::Device);
    }
  }
}

TEST(Method, ParsesTheNamesItPrints) {
  for (MethodChoice m :
       {MethodChoice::Auto, MethodChoice::Device, MethodChoice::OneShot, MethodChoice::Staged}) {
    MethodChoice parsed = MethodChoice::Auto;
    ASSERT_TRUE(parse_method(runtime::to_string(m), parsed));
    EXPECT_EQ(parsed, m);
  }
  MethodChoice unchanged = MethodChoice::Staged;
  EXPECT_FALSE(parse_method("fast", unchanged));
  EXPECT_FALSE(parse_method("", unchanged));
  EXPECT_EQ(unchanged, MethodChoice::Staged);
}

}  // namespace
}  // namespace strider::transport
