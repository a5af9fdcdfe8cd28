#include "transfer/wire_shape.hpp"

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

bool wire_shapes_bounded() {
  static const bool bounded = runtime::forced(runtime::config().wire_bound).value_or(!mpich());
  return bounded;
}

WireShape& WireShape::operator=(WireShape&& other) noexcept {
  if (this == &other) return *this;
  free_wire_shape(*this);
  type = std::exchange(other.type, MPI_PACKED);
  count = other.count;
  posted = other.posted;
  footprint = other.footprint;
  hole = other.hole;
  return *this;
}

WireShape::~WireShape() { free_wire_shape(*this); }

namespace {

// `bytes` (at least 2) of `base` as one element of a type with a one-byte hole before its last
// byte.
int make_holed(int bytes, MPI_Datatype base, WireShape& out) {
  out.posted = bytes;
  out.footprint = std::int64_t{bytes} + 1;
  out.hole = true;
  out.count = 1;
  const int lengths[2] = {bytes - 1, 1};
  const MPI_Aint displacements[2] = {0, bytes};
  int rc = PMPI_Type_create_hindexed(2, lengths, displacements, base, &out.type);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Type_commit(&out.type);
  if (rc != MPI_SUCCESS) PMPI_Type_free(&out.type);
  return rc;
}

int make_plain(int bytes, WireShape& out) {
  out.count = out.posted = bytes;
  out.footprint = bytes;
  return MPI_SUCCESS;
}

}  // namespace

int make_wire_receive(int capacity, WireShape& out) {
  out = WireShape{};
  if (!wire_shapes_bounded()) return make_plain(capacity, out);
  return make_holed(std::max(capacity, 2), MPI_BYTE, out);
}

int make_wire_send(int bytes, bool to_self, WireShape& out) {
  out = WireShape{};
  if (!to_self || bytes < 2 || !wire_shapes_bounded()) return make_plain(bytes, out);
  return make_holed(bytes, MPI_PACKED, out);
}

void free_wire_shape(WireShape& r) {
  if (r.type != MPI_PACKED && r.type != MPI_DATATYPE_NULL) PMPI_Type_free(&r.type);
  r.type = MPI_PACKED;
}

}  // namespace strider::transfer
