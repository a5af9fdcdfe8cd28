#include "measure/perf_file.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "model/cost_model.hpp"
#include "model/perf_json.hpp"

namespace strider::measure {

void save_perf_file(const std::string& path, const model::PerfData& data) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  if (ec)
    throw std::runtime_error("cannot create " + target.parent_path().string() + ": " +
                             ec.message());
  const std::string temporary = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << model::to_json_text(data);
    if (!out.flush()) throw std::runtime_error("cannot write " + temporary);
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    fs::remove(temporary);
    throw std::runtime_error("cannot write " + path + ": " + ec.message());
  }
}

std::string merge_other_placements(const std::string& path, model::PerfData& data) {
  std::string text;
  model::PerfData old;
  std::string error;
  if (!model::read_text_file(path, text) || !model::from_json_text(text, old, error) ||
      !(old.machine == data.machine)) {
    return {};
  }
  std::string kept;
  for (const auto& [placement, tables] : old.transfers) {
    if (data.transfers.count(placement) == 0) {
      data.transfers[placement] = tables;
      kept += std::string(kept.empty() ? "" : ", ") + model::to_string(placement);
    }
  }
  return kept;
}

std::string summarize(const model::PerfData& d) {
  std::ostringstream out;
  char line[256];
  out << "machine: " << d.machine.gpu << ", CUDA driver " << d.machine.driver << ", runtime "
      << d.cuda_runtime << "\nMPI: " << d.machine.mpi << "\nmeasured: " << d.created << " by "
      << d.tool << "\n";
  std::snprintf(line, sizeof line, "launch + sync: %.2f us\n", d.launch_sync * 1e6);
  out << line;
  for (double s : {1024.0, 1048576.0, 67108864.0}) {
    std::snprintf(line, sizeof line, "%9.0f B: D2H %8.1f us  H2D %8.1f us", s, d.d2h.at(s) * 1e6,
                  d.h2d.at(s) * 1e6);
    out << line;
    for (const auto& [placement, t] : d.transfers) {
      std::snprintf(line, sizeof line, "  %s host ping-pong %8.1f us", model::to_string(placement),
                    t.host.at(s) * 1e6);
      out << line;
      if (t.device) {
        std::snprintf(line, sizeof line, " device %8.1f us", t.device->at(s) * 1e6);
        out << line;
      }
      if (t.peer_write) {
        std::snprintf(line, sizeof line, " peer write %8.1f us", t.peer_write->at(s) * 1e6);
        out << line;
      }
    }
    out << "\n";
  }
  out << d.pack.size() << " pack/unpack tables ("
      << (d.pack.empty() ? 0 : d.pack.front().seconds.values.size()) << " cells each)\n";
  return out.str();
}

}  // namespace strider::measure
