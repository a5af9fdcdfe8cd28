// Reading the perf file and finding it: no JSON involved, so every build has them.
#include <fstream>
#include <sstream>

#include "model/perf_json.hpp"

namespace strider::model {

bool read_text_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return false;
  out = std::move(text).str();
  return true;
}

std::string perf_file_path(const std::function<const char*(const char*)>& getenv) {
  auto set = [&](const char* name) {
    const char* v = getenv(name);
    return v != nullptr && *v != '\0' ? std::string(v) : std::string();
  };
  if (auto file = set("STRIDER_PERF_FILE"); !file.empty()) return file;
  std::string cache = set("XDG_CACHE_HOME");
  if (cache.empty()) {
    const std::string home = set("HOME");
    if (home.empty()) return {};
    cache = home + "/.cache";
  }
  return cache + "/strider/perf.json";
}

}  // namespace strider::model
