#include "transfer/state.hpp"

#include "runtime/attribute_key.hpp"
#include "runtime/config.hpp"
#include "runtime/log.hpp"
#include "transfer/cuda_aware.hpp"
#include "transfer/placement.hpp"

namespace strider::transfer {

using runtime::LogLevel;

namespace {

// The attribute a committed type carries. MPI calls delete_plan when the type object dies
// (whichever path freed it) and copy_plan when MPI_Type_dup copies a committed type.
struct Attribute {
  std::shared_ptr<const plan::Plan> plan;
};

int copy_plan(MPI_Datatype, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = new Attribute(*static_cast<Attribute*>(in));
  *flag = 1;
  return MPI_SUCCESS;
}

int delete_plan(MPI_Datatype type, int, void* value, void*) {
  auto* attribute = static_cast<Attribute*>(value);
  // Only if the cache still holds this very plan: a re-commit may have replaced it.
  if (auto cached = plans().find(type); cached && cached == attribute->plan) plans().erase(type);
  delete attribute;
  return MPI_SUCCESS;
}

// The plans' key on committed types.
runtime::AttributeKey<runtime::AttributeOf::Type>& plan_key() {
  static runtime::AttributeKey<runtime::AttributeOf::Type> key(&copy_plan, &delete_plan);
  return key;
}

int keyval() { return plan_key().get(); }

void log_plan(MPI_Datatype type, const plan::Plan& p, const plan::Explanation* explanation) {
  (void)type;
  if (runtime::log_enabled(LogLevel::Debug)) {
    runtime::log(LogLevel::Debug, "commit:\n%s", plan::describe(p, explanation).c_str());
  } else if (!p.supported) {
    runtime::log(LogLevel::Info, "type left to the MPI: %s", p.reason.c_str());
  }
}

}  // namespace

Counters& counters() {
  static Counters c;
  return c;
}

plan::PlanCache& plans() {
  // Leaked: MPI_Finalize, which clears it, may run from an atexit handler, after the
  // function-local statics made since that handler was registered are gone.
  static auto* cache = new plan::PlanCache;
  return *cache;
}

void start() {
  runtime::report_config_problems();
  int rank = -1;
  if (PMPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS) runtime::set_log_rank(rank);
  keyval();
  if (transfer::mpi_cuda_aware()) transfer::learn_node_layout();
}

void stop() {
  plans().clear();
  plan_key().free();
}

void on_commit(MPI_Datatype type) {
  if (plans().find(type)) return;  // committing a committed type changes nothing
  const bool explain = runtime::log_enabled(LogLevel::Debug);
  plan::Explanation explanation;
  std::shared_ptr<const plan::Plan> p = plan::build_plan(type, explain ? &explanation : nullptr);
  (p->supported ? counters().types_planned : counters().types_unsupported)++;
  log_plan(type, *p, explain ? &explanation : nullptr);
  plans().put(type, p);
  if (const int kv = keyval(); kv != MPI_KEYVAL_INVALID) {
    PMPI_Type_set_attr(type, kv, new Attribute{p});
  }
}

void on_free(MPI_Datatype type) { plans().erase(type); }

std::shared_ptr<const plan::Plan> plan_for(MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) return nullptr;
  if (auto p = plans().find(type)) return p;
  switch (decode::origin_of(type)) {
    case decode::Origin::Unknown:
      return nullptr;  // invalid or unreadable: the MPI decides, nothing is cached
    case decode::Origin::Predefined: {
      auto p = plan::build_plan(type);
      plans().put(type, p);
      return p;
    }
    case decode::Origin::Derived:
      break;
  }
  const int kv = keyval();
  if (kv == MPI_KEYVAL_INVALID) return nullptr;
  void* value = nullptr;
  int found = 0;
  if (PMPI_Type_get_attr(type, kv, &value, &found) != MPI_SUCCESS || !found) return nullptr;
  auto p = static_cast<Attribute*>(value)->plan;
  plans().put(type, p);
  return p;
}

}  // namespace strider::transfer
