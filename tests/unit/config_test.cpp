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

TEST(Config, PointToPointVariables) {
  const Config defaults = parse({});
  EXPECT_EQ(defaults.method, std::nullopt);
  EXPECT_EQ(defaults.mpi_cuda_aware, Tristate::Unset);
  EXPECT_EQ(defaults.host_p2p, HostPath::Forward);
  EXPECT_EQ(defaults.host_collectives, HostPath::Forward);
  EXPECT_EQ(defaults.pool_bytes, std::size_t{1} << 30);
  const Config c = parse({{"STRIDER_METHOD", "oneshot"},
                          {"STRIDER_MPI_CUDA_AWARE", "0"},
                          {"STRIDER_P2P_HOST", "pack"},
                          {"STRIDER_COLL_HOST", "pack"},
                          {"STRIDER_POOL_BYTES", "256M"}});
  EXPECT_EQ(c.method, model::Method::OneShot);
  EXPECT_EQ(c.mpi_cuda_aware, Tristate::No);
  EXPECT_EQ(c.host_p2p, HostPath::Pack);
  EXPECT_EQ(c.host_collectives, HostPath::Pack);
  EXPECT_EQ(c.pool_bytes, std::size_t{256} << 20);
  EXPECT_TRUE(c.problems.empty());
}

TEST(Config, SameNode) {
  EXPECT_TRUE(parse({}).same_node);
  EXPECT_FALSE(parse({{"STRIDER_SAME_NODE", "0"}}).same_node);
  EXPECT_FALSE(parse({{"STRIDER_SAME_NODE", "off"}}).same_node);
  EXPECT_TRUE(parse({{"STRIDER_SAME_NODE", "yes"}}).same_node);
  const Config bad = parse({{"STRIDER_SAME_NODE", "sometimes"}});
  EXPECT_TRUE(bad.same_node);
  ASSERT_EQ(bad.problems.size(), 1u);
  EXPECT_NE(bad.problems[0].find("STRIDER_SAME_NODE"), std::string::npos);
}

TEST(Config, ByteCounts) {
  EXPECT_EQ(parse({{"STRIDER_POOL_BYTES", "4096"}}).pool_bytes, 4096u);
  EXPECT_EQ(parse({{"STRIDER_POOL_BYTES", "2k"}}).pool_bytes, 2048u);
  EXPECT_EQ(parse({{"STRIDER_POOL_BYTES", "3G"}}).pool_bytes, std::size_t{3} << 30);
  EXPECT_EQ(parse({{"STRIDER_POOL_BYTES", "0"}}).pool_bytes, 0u);
  for (const char* bad : {"-1", "12Q", "M", "1MB", "99999999999999999999", "17179869184G"}) {
    const Config c = parse({{"STRIDER_POOL_BYTES", bad}});
    EXPECT_EQ(c.pool_bytes, std::size_t{1} << 30) << bad;
    ASSERT_EQ(c.problems.size(), 1u) << bad;
    EXPECT_NE(c.problems[0].find("not a byte count"), std::string::npos);
  }
}

TEST(Config, TestFailDeferred) {
  EXPECT_EQ(parse({}).test_fail_deferred, 0);
  EXPECT_EQ(parse({{"STRIDER_TEST_FAIL_DEFERRED", "3"}}).test_fail_deferred, 3);
  const Config c = parse({{"STRIDER_TEST_FAIL_DEFERRED", "often"}});
  EXPECT_EQ(c.test_fail_deferred, 0);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_NE(c.problems[0].find("not a count"), std::string::npos);
}

TEST(Config, ProgressQuietSpell) {
  EXPECT_EQ(parse({}).progress_us, 100);
  EXPECT_EQ(parse({{"STRIDER_PROGRESS_US", "0"}}).progress_us, 0);
  EXPECT_EQ(parse({{"STRIDER_PROGRESS_US", "2500"}}).progress_us, 2500);
  const Config c = parse({{"STRIDER_PROGRESS_US", "-5"}});
  EXPECT_EQ(c.progress_us, 100);
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_NE(c.problems[0].find("not a count"), std::string::npos);
}

TEST(Config, TestNodeSize) {
  EXPECT_EQ(parse({}).test_node_size, 0);
  EXPECT_EQ(parse({{"STRIDER_TEST_NODE_SIZE", "2"}}).test_node_size, 2);
  EXPECT_EQ(parse({{"STRIDER_TEST_NODE_SIZE", "0"}}).test_node_size, 0);
  for (const char* bad : {"-2", "two", "2x", "99999999999"}) {
    const Config c = parse({{"STRIDER_TEST_NODE_SIZE", bad}});
    EXPECT_EQ(c.test_node_size, 0) << bad;
    ASSERT_EQ(c.problems.size(), 1u) << bad;
    EXPECT_NE(c.problems[0].find("not a count"), std::string::npos);
  }
}

TEST(Config, Managed) {
  EXPECT_EQ(parse({}).managed, ManagedPath::Auto);
  EXPECT_EQ(parse({{"STRIDER_MANAGED", "host"}}).managed, ManagedPath::Host);
  EXPECT_EQ(parse({{"STRIDER_MANAGED", "gpu"}}).managed, ManagedPath::Gpu);
  EXPECT_EQ(parse({{"STRIDER_MANAGED", "auto"}}).managed, ManagedPath::Auto);
  const Config c = parse({{"STRIDER_MANAGED", "cpu"}});
  EXPECT_EQ(c.managed, ManagedPath::Auto);
  EXPECT_EQ(c.problems.size(), 1u);
}

TEST(Config, DirectMinBlock) {
  EXPECT_FALSE(parse({}).direct_min_block.has_value());
  EXPECT_EQ(parse({{"STRIDER_DIRECT_MIN_BLOCK", "0"}}).direct_min_block, std::size_t{0});
  EXPECT_EQ(parse({{"STRIDER_DIRECT_MIN_BLOCK", "1k"}}).direct_min_block, std::size_t{1024});
  for (const char* bad : {"-4", "four", "4B"}) {
    const Config c = parse({{"STRIDER_DIRECT_MIN_BLOCK", bad}});
    EXPECT_FALSE(c.direct_min_block.has_value()) << bad;
    ASSERT_EQ(c.problems.size(), 1u) << bad;
  }
}

}  // namespace
}  // namespace strider::runtime
