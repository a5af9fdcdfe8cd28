// The configuration of the layers above ipc (transfer, offers, collective, calls, interpose),
// taken from runtime::Config in one place (settings.cpp): each decision reads a field here
// instead of the environment's parse, and a test can build Settings from any Config.
#pragma once

#include "runtime/config.hpp"
#include "transfer/method.hpp"

namespace strider::transfer {

struct Settings {
  bool disabled = false;  // a pure pass-through (STRIDER_DISABLE)
  runtime::HostEngine host_engine = runtime::HostEngine::Auto;
  bool gpu_engine = true;
  int gpu_max_word = 16;
  MethodRequest method;                                         // nothing: the model's choice
  runtime::Tristate mpi_cuda_aware = runtime::Tristate::Unset;  // unset: ask the MPI
  runtime::HostPath host_p2p = runtime::HostPath::Forward;
  runtime::HostPath host_collectives = runtime::HostPath::Forward;
  runtime::ManagedPath managed = runtime::ManagedPath::Auto;
  runtime::Tristate wire_bound = runtime::Tristate::Unset;  // unset: all MPIs but MPICH
  bool same_node = true;         // GPU to GPU on one node (offers, same-node collectives)
  bool same_node_direct = true;  // read and write in place across processes
  runtime::Tristate gpu_reductions = runtime::Tristate::Unset;
  bool bursts = true;          // arrival and pack waves, deferred sends
  int progress_us = 100;       // the progress thread's quiet spell; 0: no progress thread
  int test_fail_deferred = 0;  // every Nth deferred send fails at its flush (tests); 0 off
};

// Pure: the settings a configuration gives.
Settings settings_from(const runtime::Config& config);

// The process's settings (from runtime::config(), once).
const Settings& settings();

// From now on a pure pass-through, as with STRIDER_DISABLE (at MPI_Init, on an MPI whose ABI is
// not the one this build was made for; before any other thread may call the MPI).
void become_pass_through();

}  // namespace strider::transfer
