#include "transfer/settings.hpp"

namespace strider::transfer {

Settings settings_from(const runtime::Config& config) {
  Settings s;
  s.disabled = config.disabled;
  s.host_engine = config.host_engine;
  s.gpu_engine = config.gpu_engine;
  s.gpu_max_word = config.gpu_max_word;
  s.method = config.method;
  s.mpi_cuda_aware = config.mpi_cuda_aware;
  s.host_p2p = config.host_p2p;
  s.host_collectives = config.host_collectives;
  s.managed = config.managed;
  s.wire_bound = config.wire_bound;
  s.same_node = config.same_node;
  s.same_node_direct = config.same_node_direct;
  s.gpu_reductions = config.gpu_reductions;
  s.bursts = config.bursts;
  s.progress_us = config.progress_us;
  s.test_fail_deferred = config.test_fail_deferred;
  return s;
}

namespace {

Settings& the_settings() {
  static Settings s = settings_from(runtime::config());
  return s;
}

}  // namespace

const Settings& settings() { return the_settings(); }

void become_pass_through() { the_settings().disabled = true; }

}  // namespace strider::transfer
