// Every environment variable Strider reads, parsed in this one place (README has the table).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/method.hpp"

namespace strider::runtime {

enum class LogLevel { Error = 0, Warn = 1, Info = 2, Debug = 3 };
enum class HostEngine { On, Off, Auto };
// Host buffers in point-to-point or collectives: straight to the MPI, or through Strider's
// packed path (which lets the GPU path's logic be tested without a GPU).
enum class HostPath { Forward, Pack };
// Who moves managed memory: Strider's GPU kernels, the host (as host memory), or whichever
// holds its pages at the call (Auto: host memory where the host holds them).
enum class ManagedPath { Auto, Gpu, Host };
enum class Tristate { Unset, No, Yes };
// A setting's forced value, or nothing when it is unset (the caller decides).
inline std::optional<bool> forced(Tristate t) {
  if (t == Tristate::Unset) return std::nullopt;
  return t == Tristate::Yes;
}

struct Config {
  bool disabled = false;                          // STRIDER_DISABLE
  LogLevel log_level = LogLevel::Warn;            // STRIDER_LOG
  HostEngine host_engine = HostEngine::Auto;      // STRIDER_HOST_ENGINE
  bool gpu_engine = true;                         // STRIDER_GPU_ENGINE
  int gpu_max_word = 16;                          // STRIDER_GPU_MAX_WORD (tuning and benchmarks)
  model::MethodRequest method;                    // STRIDER_METHOD (nothing: auto)
  Tristate mpi_cuda_aware = Tristate::Unset;      // STRIDER_MPI_CUDA_AWARE (unset: ask the MPI)
  HostPath host_p2p = HostPath::Forward;          // STRIDER_P2P_HOST
  HostPath host_collectives = HostPath::Forward;  // STRIDER_COLL_HOST
  ManagedPath managed = ManagedPath::Auto;        // STRIDER_MANAGED
  std::size_t pool_bytes = std::size_t{1} << 30;  // STRIDER_POOL_BYTES, per pool
  Tristate wire_bound = Tristate::Unset;          // STRIDER_WIRE_BOUND (unset: all MPIs but MPICH)
  bool same_node = true;                          // STRIDER_SAME_NODE: GPU to GPU on one node
  bool same_node_direct = true;  // STRIDER_SAME_NODE_DIRECT: collectives read in place
  // STRIDER_GPU_REDUCE: same-node reductions computed on the GPUs: always (Yes), never (No), or
  // where transfer's ReducePolicy expects it faster (unset).
  Tristate gpu_reductions = Tristate::Unset;
  bool bursts = true;  // STRIDER_BURST: arrival and pack waves, deferred sends (docs/bursts.md)
  // STRIDER_PROGRESS_US: the quiet spell (no MPI call of the application's) after which the
  // progress thread starts the deferred sends; 0: no progress thread (docs/bursts.md, B8).
  int progress_us = 100;
  // STRIDER_DIRECT_MIN_BLOCK (tuning and benchmarks): the smallest block copied in place across
  // two GPUs; unset: ipc::DirectPolicy's.
  std::optional<std::size_t> direct_min_block;
  bool profile = false;    // STRIDER_PROFILE: time per phase printed at MPI_Finalize (profile.hpp)
  int test_node_size = 0;  // STRIDER_TEST_NODE_SIZE (tests): virtual nodes of N ranks; 0 off
  // STRIDER_TEST_FAIL_DEFERRED (tests): every Nth deferred send fails at its flush as a failed
  // pack would (reported through its communicator's error handler and its request); 0 off.
  int test_fail_deferred = 0;
  std::vector<std::string> problems;  // one message per invalid value (defaults were used)
};

using Getenv = std::function<const char*(const char*)>;

// Pure: parses the variables that `getenv` returns.
Config parse_config(const Getenv& getenv);

// The process's configuration, read from the environment once.
const Config& config();

const char* to_string(LogLevel level);
const char* to_string(HostEngine engine);

}  // namespace strider::runtime
