#include "ipc/settings.hpp"

namespace strider::ipc {

Settings settings_from(const runtime::Config& config) {
  Settings s;
  s.pool_bytes = config.pool_bytes;
  s.direct_min_block = config.direct_min_block;
  return s;
}

const Settings& settings() {
  static const Settings s = settings_from(runtime::config());
  return s;
}

}  // namespace strider::ipc
