#include "model/perf_json.hpp"

#include <nlohmann/json.hpp>

namespace strider::model {

namespace {

using nlohmann::json;

// The perf file's names of pack targets (schema version 1): "mapped" is the one-shot method.
const char* target_name(Method t) {
  switch (t) {
    case Method::Device:
      return "device";
    case Method::OneShot:
      return "mapped";
    case Method::Staged:
    case Method::Host:
      break;
  }
  return "staged";
}

Method target_from(const json& j) {
  const auto text = j.get<std::string>();
  for (Method t : {Method::Device, Method::OneShot, Method::Staged}) {
    if (text == target_name(t)) return t;
  }
  throw std::invalid_argument("unknown pack target '" + text + "'");
}
const char* to_string(Direction d) { return d == Direction::Pack ? "pack" : "unpack"; }

json table_json(const Table1D& t) { return {{"bytes", t.x}, {"seconds", t.y}}; }

Table1D table_from(const json& j) {
  return {j.at("bytes").get<std::vector<double>>(), j.at("seconds").get<std::vector<double>>()};
}

template <class Enum>
Enum enum_from(const json& j, const char* a_name, Enum a, const char* b_name, Enum b) {
  const auto text = j.get<std::string>();
  if (text == a_name) return a;
  if (text == b_name) return b;
  throw std::invalid_argument("unknown value '" + text + "'");
}

}  // namespace

std::string to_json_text(const PerfData& d) {
  json transfers = json::object();
  for (const auto& [placement, t] : d.transfers) {
    json entry = {{"host", table_json(t.host)}};
    if (t.device) entry["device"] = table_json(*t.device);
    if (t.peer_write) entry["peer_write"] = table_json(*t.peer_write);
    transfers[to_string(placement)] = entry;
  }
  json pack = json::array();
  for (const PackTable& p : d.pack) {
    json rows = json::array();
    const std::size_t n = p.seconds.columns.size();
    for (std::size_t r = 0; r < p.seconds.rows.size(); ++r) {
      rows.push_back(std::vector<double>(p.seconds.values.begin() + r * n,
                                         p.seconds.values.begin() + (r + 1) * n));
    }
    pack.push_back({{"target", target_name(p.target)},
                    {"direction", to_string(p.direction)},
                    {"dims", p.dims},
                    {"irregular", p.irregular},
                    {"stride_ratio", p.stride_ratio},
                    {"block_bytes", p.seconds.rows},
                    {"object_bytes", p.seconds.columns},
                    {"seconds", rows}});
  }
  json loggops = json::object();
  for (const auto& [method, samples] : d.loggops) {
    json list = json::array();
    for (const LogGopsSample& x : samples) {
      list.push_back({{"bytes", x.bytes},
                      {"send_overhead", x.send_overhead},
                      {"recv_overhead", x.recv_overhead},
                      {"stream_gap", x.stream_gap},
                      {"pingpong", x.pingpong}});
    }
    loggops[method] = list;
  }
  json j = {{"schema", kSchemaName},
            {"schema_version", d.schema_version},
            {"created", d.created},
            {"tool", d.tool},
            {"machine",
             {{"gpu", d.machine.gpu},
              {"cuda_driver", d.machine.driver},
              {"cuda_runtime", d.cuda_runtime},
              {"mpi", d.machine.mpi}}},
            {"launch_sync_seconds", d.launch_sync},
            {"copies", {{"d2h", table_json(d.d2h)}, {"h2d", table_json(d.h2d)}}},
            {"transfers", transfers},
            {"pack", pack}};
  if (!d.loggops.empty()) j["loggops"] = loggops;
  // Invalid UTF-8 in a GPU or MPI name is replaced rather than thrown on.
  return j.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

bool from_json_text(const std::string& text, PerfData& out, std::string& error) {
  try {
    const json j = json::parse(text);
    if (!j.is_object() || j.value("schema", "") != kSchemaName) {
      error = "not a Strider perf file";
      return false;
    }
    PerfData d;
    d.schema_version = j.at("schema_version").get<int>();
    if (d.schema_version != kSchemaVersion) {
      error = "schema version " + std::to_string(d.schema_version) + ", this Strider reads " +
              std::to_string(kSchemaVersion);
      return false;
    }
    d.created = j.value("created", "");
    d.tool = j.value("tool", "");
    const json& m = j.at("machine");
    d.machine = {m.at("gpu").get<std::string>(), m.at("cuda_driver").get<int>(),
                 m.at("mpi").get<std::string>()};
    d.cuda_runtime = m.value("cuda_runtime", "");
    d.launch_sync = j.at("launch_sync_seconds").get<double>();
    d.d2h = table_from(j.at("copies").at("d2h"));
    d.h2d = table_from(j.at("copies").at("h2d"));
    for (const auto& [name, entry] : j.at("transfers").items()) {
      Placement placement{};
      if (!parse_placement(name, placement)) throw std::invalid_argument("placement " + name);
      TransferTables t{table_from(entry.at("host")), std::nullopt, std::nullopt};
      if (entry.contains("device")) t.device = table_from(entry.at("device"));
      if (entry.contains("peer_write")) t.peer_write = table_from(entry.at("peer_write"));
      d.transfers[placement] = std::move(t);
    }
    for (const json& p : j.at("pack")) {
      PackTable t;
      t.target = target_from(p.at("target"));
      t.direction =
          enum_from(p.at("direction"), "pack", Direction::Pack, "unpack", Direction::Unpack);
      t.dims = p.at("dims").get<int>();
      t.irregular = p.value("irregular", false);
      t.stride_ratio = p.at("stride_ratio").get<double>();
      t.seconds.rows = p.at("block_bytes").get<std::vector<double>>();
      t.seconds.columns = p.at("object_bytes").get<std::vector<double>>();
      for (const json& row : p.at("seconds")) {
        const auto values = row.get<std::vector<double>>();
        if (values.size() != t.seconds.columns.size()) {
          throw std::invalid_argument("pack row of the wrong length");
        }
        t.seconds.values.insert(t.seconds.values.end(), values.begin(), values.end());
      }
      d.pack.push_back(std::move(t));
    }
    if (j.contains("loggops")) {
      for (const auto& [method, list] : j.at("loggops").items()) {
        auto& samples = d.loggops[method];
        for (const json& x : list) {
          samples.push_back({x.at("bytes").get<double>(), x.at("send_overhead").get<double>(),
                             x.at("recv_overhead").get<double>(), x.at("stream_gap").get<double>(),
                             x.at("pingpong").get<double>()});
        }
      }
    }
    if (std::string e = validate(d); !e.empty()) {
      error = e;
      return false;
    }
    out = std::move(d);
    return true;
  } catch (const std::exception& e) {
    error = std::string("malformed: ") + e.what();
    return false;
  }
}

}  // namespace strider::model
