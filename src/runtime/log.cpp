#include "runtime/log.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace strider::runtime {
namespace {

std::atomic<int> g_rank{-1};

int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  return -1;
}

}  // namespace

bool log_enabled(LogLevel level) { return level <= config().log_level; }

void set_log_rank(int rank) { g_rank.store(rank, std::memory_order_relaxed); }

void log(LogLevel level, const char* format, ...) {
  if (!log_enabled(level)) return;
  char message[2048];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  int rank = g_rank.load(std::memory_order_relaxed);
  if (rank < 0) rank = launcher_rank();
  // One fprintf per line keeps lines from different threads whole.
  if (rank >= 0) {
    std::fprintf(stderr, "[strider %d] %s: %s\n", rank, to_string(level), message);
  } else {
    std::fprintf(stderr, "[strider] %s: %s\n", to_string(level), message);
  }
}

void report_config_problems() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const std::string& p : config().problems) log(LogLevel::Error, "%s", p.c_str());
  });
}

}  // namespace strider::runtime
