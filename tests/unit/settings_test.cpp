// Each layer's settings carry the configuration's values (every field away from its default).
#include "ipc/settings.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "transfer/settings.hpp"

namespace strider {
namespace {

runtime::Config parse(const std::map<std::string, std::string>& env) {
  return runtime::parse_config([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(Settings, TransferCarriesEveryValue) {
  const runtime::Config c = parse({{"STRIDER_DISABLE", "1"},
                                   {"STRIDER_HOST_ENGINE", "off"},
                                   {"STRIDER_GPU_ENGINE", "0"},
                                   {"STRIDER_GPU_MAX_WORD", "4"},
                                   {"STRIDER_METHOD", "staged"},
                                   {"STRIDER_MPI_CUDA_AWARE", "1"},
                                   {"STRIDER_P2P_HOST", "pack"},
                                   {"STRIDER_COLL_HOST", "pack"},
                                   {"STRIDER_MANAGED", "host"},
                                   {"STRIDER_WIRE_BOUND", "0"},
                                   {"STRIDER_SAME_NODE", "0"},
                                   {"STRIDER_SAME_NODE_DIRECT", "0"},
                                   {"STRIDER_GPU_REDUCE", "1"},
                                   {"STRIDER_BURST", "0"},
                                   {"STRIDER_PROGRESS_US", "250"}});
  ASSERT_TRUE(c.problems.empty()) << c.problems.front();
  const transfer::Settings s = transfer::settings_from(c);
  EXPECT_TRUE(s.disabled);
  EXPECT_EQ(s.host_engine, runtime::HostEngine::Off);
  EXPECT_FALSE(s.gpu_engine);
  EXPECT_EQ(s.gpu_max_word, 4);
  ASSERT_TRUE(s.method.has_value());
  EXPECT_EQ(*s.method, transfer::Method::Staged);
  EXPECT_EQ(s.mpi_cuda_aware, runtime::Tristate::Yes);
  EXPECT_EQ(s.host_p2p, runtime::HostPath::Pack);
  EXPECT_EQ(s.host_collectives, runtime::HostPath::Pack);
  EXPECT_EQ(s.managed, runtime::ManagedPath::Host);
  EXPECT_EQ(s.wire_bound, runtime::Tristate::No);
  EXPECT_FALSE(s.same_node);
  EXPECT_FALSE(s.same_node_direct);
  EXPECT_EQ(s.gpu_reductions, runtime::Tristate::Yes);
  EXPECT_FALSE(s.bursts);
  EXPECT_EQ(s.progress_us, 250);
}

TEST(Settings, TransferDefaultsMatchTheConfiguration) {
  const transfer::Settings s = transfer::settings_from(parse({}));
  EXPECT_FALSE(s.disabled);
  EXPECT_TRUE(s.gpu_engine);
  EXPECT_FALSE(s.method.has_value());
  EXPECT_TRUE(s.same_node);
  EXPECT_TRUE(s.bursts);
  EXPECT_EQ(s.progress_us, 100);
  EXPECT_EQ(s.host_p2p, runtime::HostPath::Forward);
}

TEST(Settings, IpcCarriesPoolAndBlockBounds) {
  const ipc::Settings s = ipc::settings_from(
      parse({{"STRIDER_POOL_BYTES", "1048576"}, {"STRIDER_DIRECT_MIN_BLOCK", "64"}}));
  EXPECT_EQ(s.pool_bytes, std::size_t{1} << 20);
  ASSERT_TRUE(s.direct_min_block.has_value());
  EXPECT_EQ(*s.direct_min_block, 64u);
  EXPECT_FALSE(ipc::settings_from(parse({})).direct_min_block.has_value());
}

}  // namespace
}  // namespace strider
