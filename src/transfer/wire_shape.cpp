#include "transfer/wire_shape.hpp"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "runtime/mpi_library.hpp"
#include "transfer/settings.hpp"

namespace strider::transfer {
bool wire_shapes_bounded() {
  static const bool bounded =
      runtime::forced(settings().wire_bound)
          .value_or(runtime::mpi_library().family != runtime::MpiFamily::Mpich);
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
  owned = std::exchange(other.owned, false);
  return *this;
}

WireShape::~WireShape() { free_wire_shape(*this); }

namespace {

// `bytes` (at least 2) of `base` as one element of a committed type with a one-byte hole before
// its last byte.
int create_holed(int bytes, MPI_Datatype base, MPI_Datatype& out) {
  const int lengths[2] = {bytes - 1, 1};
  const MPI_Aint displacements[2] = {0, bytes};
  int rc = PMPI_Type_create_hindexed(2, lengths, displacements, base, &out);
  if (rc != MPI_SUCCESS) return rc;
  rc = PMPI_Type_commit(&out);
  if (rc != MPI_SUCCESS) PMPI_Type_free(&out);
  return rc;
}

// The holed types made so far, by (bytes, base), up to kMax (then each shape makes its own).
class HoledTypes {
 public:
  static constexpr std::size_t kMax = 4096;
  // The cached type, or one made now (`owned`: the caller's to free, the cache being full).
  int get(int bytes, MPI_Datatype base, MPI_Datatype& out, bool& owned) {
    const std::uint64_t key = (std::uint64_t(unsigned(bytes)) << 1) | (base == MPI_PACKED);
    std::lock_guard lock(mutex_);
    if (const auto it = types_.find(key); it != types_.end()) {
      out = it->second;
      owned = false;
      return MPI_SUCCESS;
    }
    const int rc = create_holed(bytes, base, out);
    owned = rc == MPI_SUCCESS && types_.size() >= kMax;
    if (rc == MPI_SUCCESS && !owned) types_.emplace(key, out);
    return rc;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    for (auto& [key, type] : types_) PMPI_Type_free(&type);
    types_.clear();
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::uint64_t, MPI_Datatype> types_;
};

HoledTypes& holed_types() {
  static HoledTypes* t = new HoledTypes;  // outlives static destruction at exit
  return *t;
}

int make_holed(int bytes, MPI_Datatype base, WireShape& out) {
  out.posted = bytes;
  out.footprint = std::int64_t{bytes} + 1;
  out.hole = true;
  out.count = 1;
  return holed_types().get(bytes, base, out.type, out.owned);
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
  if (r.owned && r.type != MPI_PACKED && r.type != MPI_DATATYPE_NULL) PMPI_Type_free(&r.type);
  r.type = MPI_PACKED;
  r.owned = false;
}

void free_holed_types() { holed_types().clear(); }

}  // namespace strider::transfer
