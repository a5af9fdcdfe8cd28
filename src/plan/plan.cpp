#include "plan/plan.hpp"

#include "plan/host_policy.hpp"

namespace strider::plan {

std::shared_ptr<const Plan> build_plan(MPI_Datatype type, Explanation* explanation) {
  auto plan = std::make_shared<Plan>();
  try {
    plan->bounds = decode::bounds_of(type);
    ir::Node layout = decode::decode(type, plan->bounds);
    plan->ir_depth = ir::depth(layout);
    std::vector<canon::Step>* trace = nullptr;
    if (explanation) {
      explanation->ir = layout;
      trace = &explanation->steps;
    }
    ir::Node canonical = canon::canonicalize(std::move(layout), trace);
    auto form = canon::lower(canonical);
    if (!form) {
      plan->reason = "more than " + std::to_string(canon::kMaxPieces) + " pieces";
      return plan;
    }
    plan->form = std::move(*form);
    plan->shape = model::element_shape(plan->form, plan->bounds.extent);
    plan->supported = true;
    plan->host_engine_wins = host_engine_wins(*plan);
  } catch (const std::exception& e) {
    plan->reason = e.what();
  }
  return plan;
}

std::string describe(const Plan& plan, const Explanation* explanation) {
  std::string out;
  const auto& b = plan.bounds;
  out += "size " + std::to_string(b.size) + ", lb " + std::to_string(b.lb) + ", extent " +
         std::to_string(b.extent) + ", true lb " + std::to_string(b.true_lb) + ", true extent " +
         std::to_string(b.true_extent) + "\n";
  if (explanation) {
    out += "IR:        " + ir::to_string(explanation->ir) + "\n";
    for (const canon::Step& step : explanation->steps) {
      out += "  " + step.pass + ":";
      out.append(step.pass.size() < 18 ? 18 - step.pass.size() : 1, ' ');
      out += ir::to_string(step.result) + "\n";
    }
  }
  if (plan.supported) {
    out += "canonical: " + canon::to_string(plan.form) + "\n";
  } else {
    out += "not handled by Strider (" + plan.reason + "): the system MPI is used\n";
  }
  return out;
}

}  // namespace strider::plan
