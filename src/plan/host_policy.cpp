#include "plan/host_policy.hpp"

namespace strider::plan {

bool host_engine_wins(const Plan& plan) {
  // Provisional until bench/host_pack has measured both engines.
  return plan.supported;
}

}  // namespace strider::plan
