// The runtime side of the model: loads the perf file once, on first need, and memoizes choices
// so that a repeated (object shape, peer placement, side) costs one table lookup.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "model/cost_model.hpp"

namespace strider::model {

struct LoadedModel {
  PerfData data;
  std::string source;   // the file, or "built-in defaults"
  std::string warning;  // why the file was not used; empty when it was
};

// Reads and checks the perf file at `path`. Never throws: a missing, unreadable, corrupt,
// other-version or other-machine file (identity differs from `here`, when known) yields the
// built-in defaults and a warning saying why.
LoadedModel load_model(const std::string& path, const std::optional<MachineIdentity>& here);

class Selector {
 public:
  using Loader = std::function<LoadedModel()>;
  // `loader` runs once, at the first prediction or choice; `warn` gets its warning, if any.
  Selector(Loader loader, std::function<void(const std::string&)> warn);

  const LoadedModel& model();  // loads on first use
  Prediction predict(const ObjectShape& shape, Placement placement, bool mpi_cuda_aware);
  // Memoized per thread in a fixed direct-mapped table (no lock, no allocation); a new
  // Selector starts a new memo.
  Method choose(const ObjectShape& shape, Placement placement, bool mpi_cuda_aware, bool receive);
  // model::offer_wins (cost_model.hpp), memoized with the same-node choices.
  bool offer_wins(const ObjectShape& shape, bool mpi_cuda_aware, bool receive, Method method,
                  bool burst = false);

 private:
  Loader loader_;
  std::function<void(const std::string&)> warn_;
  std::once_flag once_;
  std::unique_ptr<LoadedModel> model_;
  std::uint64_t id_;  // tells apart the memos of selectors that lived at the same address
};

}  // namespace strider::model
