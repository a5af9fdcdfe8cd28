// STRIDER_HOST_ENGINE=auto: whether the host engine beats the system MPI for a plan.
// The rule comes from bench/host_pack (see README, "Host engine policy").
#pragma once

#include "plan/plan.hpp"

namespace strider::plan {

bool host_engine_wins(const Plan& plan);

}  // namespace strider::plan
