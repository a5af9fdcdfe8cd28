#include "runtime/config.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace strider::runtime {
namespace {

Config parse(const std::map<std::string, std::string>& env) {
  return parse_config([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(Config, Defaults) {
  const Config c = parse({});
  EXPECT_FALSE(c.disabled);
  EXPECT_EQ(c.log_level, LogLevel::Warn);
  EXPECT_EQ(c.host_engine, HostEngine::Auto);
  EXPECT_TRUE(c.problems.empty());
}

TEST(Config, ParsesEveryVariable) {
  const Config c =
      parse({{"STRIDER_DISABLE", "1"}, {"STRIDER_LOG", "debug"}, {"STRIDER_HOST_ENGINE", "on"}});
  EXPECT_TRUE(c.disabled);
  EXPECT_EQ(c.log_level, LogLevel::Debug);
  EXPECT_EQ(c.host_engine, HostEngine::On);
  EXPECT_TRUE(c.problems.empty());
}

TEST(Config, InvalidValuesKeepDefaultsAndSayWhy) {
  const Config c = parse({{"STRIDER_LOG", "loud"}, {"STRIDER_HOST_ENGINE", "maybe"}});
  EXPECT_EQ(c.log_level, LogLevel::Warn);
  EXPECT_EQ(c.host_engine, HostEngine::Auto);
  ASSERT_EQ(c.problems.size(), 2u);
  EXPECT_NE(c.problems[0].find("STRIDER_LOG='loud'"), std::string::npos);
  EXPECT_NE(c.problems[0].find("error|warn|info|debug"), std::string::npos);
}

}  // namespace
}  // namespace strider::runtime
