#include "plan/host_policy.hpp"

#include "runtime/mpi_library.hpp"

namespace strider::plan {
namespace {

// Below this mean dense-block size, Strider's host engine beat the MPI's own pack in
// bench/host_pack (bench/results/2026-11-21-cpu, AMD EPYC, 1 KiB - 4 MiB packed): Open MPI 4.1
// copies blocks of 64 B and more as fast or faster (0.65-0.95x at 1-4 MiB), while MPICH 4.0 is
// 4-13x slower than Strider up to 256 B blocks and even at 512 B. Another MPI is unmeasured:
// Strider is modest there.
std::int64_t block_bytes_below_which_strider_wins() {
  return runtime::mpi_library().family == runtime::MpiFamily::Mpich ? 512 : 64;
}

}  // namespace

bool host_engine_wins(const Plan& plan) {
  if (!plan.supported || plan.form.pieces.empty()) return false;
  // A single dense block is one memcpy either way; the MPI's path is shorter.
  if (plan.form.strided() && plan.form.pieces.front().dims.empty()) return false;
  std::int64_t blocks = 0;
  for (const canon::StridedBlock& sb : plan.form.pieces) blocks += sb.blocks();
  blocks *= plan.form.repetitions();
  return plan.form.size < block_bytes_below_which_strider_wins() * blocks;
}

}  // namespace strider::plan
