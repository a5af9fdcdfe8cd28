#include "transfer/method.hpp"

#include <gtest/gtest.h>

namespace strider::transfer {
namespace {

constexpr Method kAll[] = {Method::OneShot, Method::Staged, Method::Device};

TEST(Method, ForcedMethodsIgnoreTheModelAndKeepDeviceOffAnUnawareMpi) {
  for (bool aware : {false, true}) {
    for (Method automatic : kAll) {
      EXPECT_EQ(choose_method(MethodRequest{Method::OneShot}, aware, automatic), Method::OneShot);
      EXPECT_EQ(choose_method(MethodRequest{Method::Staged}, aware, automatic), Method::Staged);
      EXPECT_EQ(choose_method(MethodRequest{Method::Device}, aware, automatic),
                aware ? Method::Device : Method::Staged);
    }
  }
}

TEST(Method, AutoTakesTheModelsChoiceButNeverHandsDeviceMemoryToAnUnawareMpi) {
  for (bool aware : {false, true}) {
    EXPECT_EQ(choose_method(MethodRequest{}, aware, Method::OneShot), Method::OneShot);
    EXPECT_EQ(choose_method(MethodRequest{}, aware, Method::Staged), Method::Staged);
    EXPECT_EQ(choose_method(MethodRequest{}, aware, Method::Device),
              aware ? Method::Device : Method::Staged);
  }
}

TEST(Method, ParsesTheNamesItPrints) {
  for (MethodRequest m : {MethodRequest{}, MethodRequest{Method::Device},
                          MethodRequest{Method::OneShot}, MethodRequest{Method::Staged}}) {
    MethodRequest parsed = MethodRequest{};
    ASSERT_TRUE(parse_method(model::to_string(m), parsed));
    EXPECT_EQ(parsed, m);
  }
  MethodRequest unchanged = MethodRequest{Method::Staged};
  EXPECT_FALSE(parse_method("fast", unchanged));
  EXPECT_FALSE(parse_method("", unchanged));
  EXPECT_EQ(unchanged, MethodRequest{Method::Staged});
}

}  // namespace
}  // namespace strider::transfer
