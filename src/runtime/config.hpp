// Every environment variable Strider reads, parsed in this one place (README has the table).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace strider::runtime {

enum class LogLevel { Error = 0, Warn = 1, Info = 2, Debug = 3 };
enum class HostEngine { On, Off, Auto };

struct Config {
  bool disabled = false;                      // STRIDER_DISABLE
  LogLevel log_level = LogLevel::Warn;        // STRIDER_LOG
  HostEngine host_engine = HostEngine::Auto;  // STRIDER_HOST_ENGINE
  bool gpu_engine = true;                     // STRIDER_GPU_ENGINE
  int gpu_max_word = 16;                      // STRIDER_GPU_MAX_WORD (tuning and benchmarks)
  std::vector<std::string> problems;          // one message per invalid value (defaults were used)
};

using Getenv = std::function<const char*(const char*)>;

// Pure: parses the variables that `getenv` returns.
Config parse_config(const Getenv& getenv);

// The process's configuration, read from the environment once.
const Config& config();

const char* to_string(LogLevel level);
const char* to_string(HostEngine engine);

}  // namespace strider::runtime
