// strider-explain's --count/--peer report: the performance model's cost of each transfer method
// for an object, and what auto picks on each side.
#pragma once

#include <string>

#include "model/perf_data.hpp"
#include "model/selector.hpp"
#include "plan/plan.hpp"

namespace strider::explain {

std::string describe_prediction(const model::LoadedModel& model, const plan::Plan& plan,
                                long long count, model::Placement peer, bool mpi_cuda_aware);

}  // namespace strider::explain
