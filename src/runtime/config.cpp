#include "runtime/config.hpp"

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
  return c;
}

const Config& config() {
  static const Config c = parse_config([](const char* name) { return std::getenv(name); });
  return c;
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
