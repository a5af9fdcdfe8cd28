#include "transfer/method.hpp"

#include <gtest/gtest.h>

namespace strider::transfer {
namespace {

using runtime::MethodChoice;

using model::Transfer;
constexpr Transfer kAll[] = {Transfer::OneShot, Transfer::Staged, Transfer::Device};

TEST(Method, ForcedMethodsIgnoreTheModelAndKeepDeviceOffAnUnawareMpi) {
  for (bool aware : {false, true}) {
    for (Transfer automatic : kAll) {
      EXPECT_EQ(choose_method(MethodChoice::OneShot, aware, automatic), Method::OneShot);
      EXPECT_EQ(choose_method(MethodChoice::Staged, aware, automatic), Method::Staged);
      EXPECT_EQ(choose_method(MethodChoice::Device, aware, automatic),
                aware ? Method::Device : Method::Staged);
    }
  }
}

TEST(Method, AutoTakesTheModelsChoiceButNeverHandsDeviceMemoryToAnUnawareMpi) {
  for (bool aware : {false, true}) {
    EXPECT_EQ(choose_method(MethodChoice::Auto, aware, Transfer::OneShot), Method::OneShot);
    EXPECT_EQ(choose_method(MethodChoice::Auto, aware, Transfer::Staged), Method::Staged);
    EXPECT_EQ(choose_method(MethodChoice::Auto, aware, Transfer::Device),
              aware ? Method::Device : Method::Staged);
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
}  // namespace strider::transfer
