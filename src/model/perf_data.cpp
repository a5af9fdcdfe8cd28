#include "model/perf_data.hpp"

#include <cmath>
#include <set>
#include <utility>

namespace strider::model {

const char* to_string(Placement placement) {
  return placement == Placement::SameNode ? "same-node" : "remote";
}

bool parse_placement(const std::string& text, Placement& out) {
  if (text == "same-node") {
    out = Placement::SameNode;
  } else if (text == "remote") {
    out = Placement::Remote;
  } else {
    return false;
  }
  return true;
}

std::string identity_mismatch(const MachineIdentity& file, const MachineIdentity& here) {
  if (file.gpu != here.gpu) return "GPU '" + file.gpu + "', this machine '" + here.gpu + "'";
  if (file.driver != here.driver) {
    return "CUDA driver " + std::to_string(file.driver) + ", this machine " +
           std::to_string(here.driver);
  }
  if (file.mpi != here.mpi) return "MPI '" + file.mpi + "', this process '" + here.mpi + "'";
  return {};
}

std::string validate(const PerfData& data) {
  if (data.schema_version != kSchemaVersion) return "schema version mismatch";
  if (!(data.launch_sync > 0) || !std::isfinite(data.launch_sync)) {
    return "launch_sync not positive and finite";
  }
  if (auto e = validate(data.d2h, "d2h"); !e.empty()) return e;
  if (auto e = validate(data.h2d, "h2d"); !e.empty()) return e;
  if (data.transfers.empty()) return "no transfer measurements";
  for (const auto& [placement, t] : data.transfers) {
    const std::string name = std::string("transfers ") + to_string(placement);
    if (auto e = validate(t.host, name + " host"); !e.empty()) return e;
    if (t.device) {
      if (auto e = validate(*t.device, name + " device"); !e.empty()) return e;
    }
    if (t.peer_write) {
      if (auto e = validate(*t.peer_write, name + " peer_write"); !e.empty()) return e;
    }
  }
  std::set<std::pair<Method, Direction>> families;
  for (const PackTable& p : data.pack) {
    if (p.dims != 2 && p.dims != 3) return "pack table with dims other than 2 or 3";
    if (!(p.stride_ratio >= 1) || !std::isfinite(p.stride_ratio)) {
      return "pack table with a stride ratio below 1 or not finite";
    }
    if (auto e = validate(p.seconds, "pack table"); !e.empty()) return e;
    if (!p.irregular) families.insert({p.target, p.direction});
  }
  if (families.size() != 6) return "regular pack tables missing for some target and direction";
  return {};
}

}  // namespace strider::model
