#include "runtime/config.hpp"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string_view>

namespace strider::runtime {
namespace {

template <class T, std::size_t N>
void parse_choice(const Getenv& getenv, const char* name,
                  const std::pair<std::string_view, T> (&choices)[N], T& out,
                  std::vector<std::string>& problems) {
  const char* raw = getenv(name);
  if (raw == nullptr || *raw == '\0') return;
  for (const auto& [text, value] : choices) {
    if (text == raw) {
      out = value;
      return;
    }
  }
  std::string expected;
  for (const auto& [text, value] : choices) {
    if (!expected.empty()) expected += "|";
    expected += text;
  }
  problems.push_back(std::string(name) + "='" + raw + "' is not one of " + expected +
                     "; using the default");
}

// A byte count: digits with an optional K, M or G suffix (powers of 1024).
void parse_bytes(const Getenv& getenv, const char* name, std::size_t& out,
                 std::vector<std::string>& problems) {
  const char* raw = getenv(name);
  if (raw == nullptr || *raw == '\0') return;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(raw, &end, 10);
  int shift = 0;
  if (end != raw && *end != '\0' && end[1] == '\0') {
    switch (*end) {
      case 'K':
      case 'k':
        shift = 10;
        ++end;
        break;
      case 'M':
      case 'm':
        shift = 20;
        ++end;
        break;
      case 'G':
      case 'g':
        shift = 30;
        ++end;
        break;
      default:
        break;
    }
  }
  const bool digits = end != raw && std::isdigit(static_cast<unsigned char>(*raw));
  if (!digits || *end != '\0' || errno == ERANGE || value > (~0ULL >> (shift + 1))) {
    problems.push_back(std::string(name) + "='" + raw +
                       "' is not a byte count (e.g. 268435456, 256M, 1G); using the default");
    return;
  }
  out = static_cast<std::size_t>(value << shift);
}

// A count: decimal digits, 0 to INT_MAX.
void parse_count(const Getenv& getenv, const char* name, int& out,
                 std::vector<std::string>& problems) {
  const char* raw = getenv(name);
  if (raw == nullptr || *raw == '\0') return;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(raw, &end, 10);
  if (!std::isdigit(static_cast<unsigned char>(*raw)) || *end != '\0' || errno == ERANGE ||
      value > INT_MAX) {
    problems.push_back(std::string(name) + "='" + raw +
                       "' is not a count (0, 1, 2, ...); using the default");
    return;
  }
  out = static_cast<int>(value);
}

}  // namespace

Config parse_config(const Getenv& getenv) {
  Config c;
  static const std::pair<std::string_view, bool> kBool[] = {
      {"0", false},   {"1", true},  {"no", false},    {"yes", true},
      {"off", false}, {"on", true}, {"false", false}, {"true", true}};
  static const std::pair<std::string_view, LogLevel> kLog[] = {{"error", LogLevel::Error},
                                                               {"warn", LogLevel::Warn},
                                                               {"info", LogLevel::Info},
                                                               {"debug", LogLevel::Debug}};
  static const std::pair<std::string_view, HostEngine> kEngine[] = {
      {"on", HostEngine::On}, {"off", HostEngine::Off}, {"auto", HostEngine::Auto}};
  parse_choice(getenv, "STRIDER_DISABLE", kBool, c.disabled, c.problems);
  parse_choice(getenv, "STRIDER_LOG", kLog, c.log_level, c.problems);
  parse_choice(getenv, "STRIDER_HOST_ENGINE", kEngine, c.host_engine, c.problems);
  parse_choice(getenv, "STRIDER_GPU_ENGINE", kBool, c.gpu_engine, c.problems);
  static const std::pair<std::string_view, int> kWord[] = {
      {"16", 16}, {"8", 8}, {"4", 4}, {"2", 2}, {"1", 1}};
  parse_choice(getenv, "STRIDER_GPU_MAX_WORD", kWord, c.gpu_max_word, c.problems);
  static const std::pair<std::string_view, model::MethodRequest> kMethod[] = {
      {"auto", std::nullopt},
      {"device", model::Method::Device},
      {"oneshot", model::Method::OneShot},
      {"staged", model::Method::Staged}};
  parse_choice(getenv, "STRIDER_METHOD", kMethod, c.method, c.problems);
  static const std::pair<std::string_view, Tristate> kTristate[] = {
      {"0", Tristate::No},    {"1", Tristate::Yes},  {"no", Tristate::No},
      {"yes", Tristate::Yes}, {"off", Tristate::No}, {"on", Tristate::Yes}};
  parse_choice(getenv, "STRIDER_MPI_CUDA_AWARE", kTristate, c.mpi_cuda_aware, c.problems);
  static const std::pair<std::string_view, HostPath> kHostPath[] = {{"forward", HostPath::Forward},
                                                                    {"pack", HostPath::Pack}};
  parse_choice(getenv, "STRIDER_P2P_HOST", kHostPath, c.host_p2p, c.problems);
  parse_choice(getenv, "STRIDER_COLL_HOST", kHostPath, c.host_collectives, c.problems);
  static const std::pair<std::string_view, ManagedPath> kManaged[] = {
      {"auto", ManagedPath::Auto}, {"gpu", ManagedPath::Gpu}, {"host", ManagedPath::Host}};
  parse_choice(getenv, "STRIDER_MANAGED", kManaged, c.managed, c.problems);
  parse_bytes(getenv, "STRIDER_POOL_BYTES", c.pool_bytes, c.problems);
  parse_choice(getenv, "STRIDER_WIRE_BOUND", kTristate, c.wire_bound, c.problems);
  parse_choice(getenv, "STRIDER_GPU_REDUCE", kTristate, c.gpu_reductions, c.problems);
  parse_choice(getenv, "STRIDER_SAME_NODE", kBool, c.same_node, c.problems);
  parse_choice(getenv, "STRIDER_SAME_NODE_DIRECT", kBool, c.same_node_direct, c.problems);
  parse_choice(getenv, "STRIDER_BURST", kBool, c.bursts, c.problems);
  parse_choice(getenv, "STRIDER_PROFILE", kBool, c.profile, c.problems);
  if (const char* raw = getenv("STRIDER_DIRECT_MIN_BLOCK"); raw != nullptr && *raw != '\0') {
    std::size_t bytes = 0;
    const std::size_t problems = c.problems.size();
    parse_bytes(getenv, "STRIDER_DIRECT_MIN_BLOCK", bytes, c.problems);
    if (c.problems.size() == problems) c.direct_min_block = bytes;
  }
  parse_count(getenv, "STRIDER_PROGRESS_US", c.progress_us, c.problems);
  parse_count(getenv, "STRIDER_TEST_NODE_SIZE", c.test_node_size, c.problems);
  parse_count(getenv, "STRIDER_TEST_FAIL_DEFERRED", c.test_fail_deferred, c.problems);
  return c;
}

const Config& config() {
  // Leaked, never destroyed: MPI_Finalize may run from an atexit handler, after the function-local
  // statics made since that handler was registered are gone.
  static const Config* c =
      new Config(parse_config([](const char* name) { return std::getenv(name); }));
  return *c;
}

const char* to_string(LogLevel level) {
  switch (level) {
    case LogLevel::Error:
      return "error";
    case LogLevel::Warn:
      return "warn";
    case LogLevel::Info:
      return "info";
    case LogLevel::Debug:
      return "debug";
  }
  return "?";
}

const char* to_string(HostEngine engine) {
  switch (engine) {
    case HostEngine::On:
      return "on";
    case HostEngine::Off:
      return "off";
    case HostEngine::Auto:
      return "auto";
  }
  return "?";
}

}  // namespace strider::runtime

namespace strider::runtime {}  // namespace strider::runtime
