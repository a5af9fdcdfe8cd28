#include "collective/specs.hpp"

#include "transfer/settings.hpp"
#include "transfer/state.hpp"

namespace strider::collective {

bool strider_off() { return transfer::settings().disabled; }

bool uniform_specs(int n, int count, MPI_Datatype type, std::vector<PieceSpec>& out) {
  const auto plan = transfer::plan_for(type);
  if (!plan || count < 0) return false;
  out.resize(static_cast<std::size_t>(n));
  const std::int64_t stride = std::int64_t{count} * plan->bounds.extent;
  for (int i = 0; i < n; ++i) out[i] = {i * stride, count, type};
  return true;
}

bool varying_specs(int n, const int counts[], const int displs[], MPI_Datatype type,
                   std::vector<PieceSpec>& out) {
  const auto plan = transfer::plan_for(type);
  if (!plan || negative(n, counts)) return false;
  out.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    out[i] = {std::int64_t{displs[i]} * plan->bounds.extent, counts[i], type};
  }
  return true;
}

bool single_spec(int count, MPI_Datatype type, std::int64_t displacement,
                 std::vector<PieceSpec>& out) {
  if (!transfer::plan_for(type) || count < 0) return false;
  out.assign(1, PieceSpec{displacement, count, type});
  return true;
}

bool negative(int n, const int counts[]) {
  if (n > 0 && counts == nullptr) return true;
  for (int i = 0; i < n; ++i) {
    if (counts[i] < 0) return true;
  }
  return false;
}

Uniform uniform_args(Side& side, const void* buffer, int count, MPI_Datatype type) {
  if (!side.converted() || side.pieces().empty()) {
    return {const_cast<void*>(buffer), count, type};
  }
  int c = 0, displacement = 0;
  MPI_Datatype t = MPI_DATATYPE_NULL;
  side.wire_count(0, c, displacement, t);
  return {side.wire(), c, t};
}

int varying_args(Call& call, Side& side, WireArgs& wire, const int counts[], const int displs[],
                 MPI_Datatype type, Varying& out) {
  out = {counts, displs, type};
  if (!side.converted()) return MPI_SUCCESS;
  if (const int rc = wire_args(call, side, false, wire)) return rc;
  // Pieces with nothing to carry may have no wire type of their own: take a non-empty one's.
  out = {wire.counts.data(), wire.displacements.data(), MPI_BYTE};
  for (std::size_t i = 0; i < wire.types.size(); ++i) {
    if (wire.counts[i] > 0) {
      out.type = wire.types[i];
      break;
    }
  }
  return MPI_SUCCESS;
}

void* wire_or(Side& side, const void* buffer) {
  return side.converted() ? side.wire() : const_cast<void*>(buffer);
}

}  // namespace strider::collective
