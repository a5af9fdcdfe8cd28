#include "transfer/perf_model.hpp"

#include <mpi.h>

#include <cstdlib>

#include "model/perf_json.hpp"
#include "runtime/log.hpp"
#include "runtime/machine_identity.hpp"

namespace strider::transfer {
namespace {

int world_rank() {
  int initialized = 0, finalized = 0, rank = 0;
  PMPI_Initialized(&initialized);
  PMPI_Finalized(&finalized);
  if (initialized && !finalized) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

model::LoadedModel load() {
  model::LoadedModel loaded = load_perf_file();
  if (loaded.warning.empty()) {
    runtime::log(runtime::LogLevel::Info, "performance model from %s (measured %s)",
                 loaded.source.c_str(), loaded.data.created.c_str());
  }
  return loaded;
}

void warn(const std::string& why) {
  runtime::log(world_rank() == 0 ? runtime::LogLevel::Warn : runtime::LogLevel::Info,
               "%s; choosing transfer methods from built-in defaults", why.c_str());
}

}  // namespace

model::LoadedModel load_perf_file(const std::string& path) {
  const std::string file =
      path.empty() ? model::perf_file_path([](const char* n) { return std::getenv(n); }) : path;
  return model::load_model(file, runtime::machine_identity());
}

model::Selector& perf_model() {
  // Leaked: p2p calls may run during static destruction of the application.
  static auto* selector = new model::Selector(load, warn);
  return *selector;
}

}  // namespace strider::transfer
