// The perf file's JSON form (nlohmann-json; perf_json.cpp), and where the file lives
// (perf_path.cpp). A build without nlohmann-json links perf_json_none.cpp instead.
#pragma once

#include <functional>
#include <string>

#include "model/perf_data.hpp"

namespace strider::model {

std::string to_json_text(const PerfData& data);

// Parses and validates; on failure returns false and says why in `error` (malformed JSON,
// another schema or version, missing or inconsistent tables).
bool from_json_text(const std::string& text, PerfData& out, std::string& error);

// The whole file at `path`; false if it cannot be read.
bool read_text_file(const std::string& path, std::string& out);

// $STRIDER_PERF_FILE, else ${XDG_CACHE_HOME:-$HOME/.cache}/strider/perf.json; empty when
// neither HOME nor XDG_CACHE_HOME is set.
std::string perf_file_path(const std::function<const char*(const char*)>& getenv);

}  // namespace strider::model
