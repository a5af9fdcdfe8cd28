#include "transfer/wire_receive.hpp"

#include <algorithm>
#include <string_view>

#include "runtime/config.hpp"

namespace strider::transfer {
namespace {

bool mpich() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (PMPI_Get_library_version(text, &length) != MPI_SUCCESS) return false;
  return std::string_view(text, static_cast<std::size_t>(length)).starts_with("MPICH");
}

}  // namespace

bool wire_receives_bounded() {
  static const bool bounded = runtime::forced(runtime::config().wire_bound).value_or(!mpich());
  return bounded;
}

WireReceive& WireReceive::operator=(WireReceive&& other) noexcept {
  if (this == &other) return *this;
  free_wire_receive(*this);
  type = std::exchange(other.type, MPI_PACKED);
  count = other.count;
  posted = other.posted;
  footprint = other.footprint;
  hole = other.hole;
  return *this;
}

WireReceive::~WireReceive() { free_wire_receive(*this); }

int make_wire_receive(int capacity, WireReceive& out) {
  out = WireReceive{};
  if (!wire_receives_bounded()) {
    out.count = out.posted = out.footprint = capacity;
    return MPI_SUCCESS;
  }
  out.posted = std::max(capacity, 2);
  out.footprint = out.posted + 1;
  out.hole = true;
  out.count = 1;
  const int lengths[2] = {out.posted - 1, 1};
  const MPI_Aint displacements[2] = {0, out.posted};
  int rc = PMPI_Type_create_hindexed(2, lengths, displacements, MPI_BYTE, &out.type);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Type_commit(&out.type);
  if (rc != MPI_SUCCESS) PMPI_Type_free(&out.type);
  return rc;
}

void free_wire_receive(WireReceive& r) {
  if (r.type != MPI_PACKED && r.type != MPI_DATATYPE_NULL) PMPI_Type_free(&r.type);
  r.type = MPI_PACKED;
}

}  // namespace strider::transfer
