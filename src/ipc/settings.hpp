// This layer's part of the configuration, taken from runtime::Config in one place (settings.cpp)
// so that the pools and layouts are given their bounds rather than read the environment.
#pragma once

#include <cstddef>
#include <optional>

#include "runtime/config.hpp"

namespace strider::ipc {

struct Settings {
  std::size_t pool_bytes = std::size_t{1} << 30;  // per pool (STRIDER_POOL_BYTES)
  std::optional<std::size_t> direct_min_block;    // unset: DirectPolicy's
};

// Pure: the settings a configuration gives.
Settings settings_from(const runtime::Config& config);

// The process's settings (from runtime::config(), once).
const Settings& settings();

}  // namespace strider::ipc
