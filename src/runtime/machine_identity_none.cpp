// Builds without CUDA have no GPU to identify.
#include "runtime/machine_identity.hpp"

namespace strider::runtime {

std::optional<model::MachineIdentity> machine_identity() { return std::nullopt; }
std::string cuda_runtime_version() { return "none"; }

}  // namespace strider::runtime
