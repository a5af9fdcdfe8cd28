#include "transfer/collective/mirror.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/cuda/gpu_engine.hpp"
#include "runtime/config.hpp"
#include "transfer/object.hpp"
#include "transfer/staged.hpp"

namespace strider::transfer::collective {

bool Mirror::describe(const void* buffer, int count, MPI_Datatype type, bool input, bool output) {
  if (count <= 0 || buffer == MPI_IN_PLACE) return false;
  Object object;
  if (!view_object(buffer, count, type, object)) return false;
  if (!object.gpu && runtime::config().host_collectives != runtime::HostPath::Pack) return false;
  const decode::Bounds& b = object.plan->bounds;
  lo_ = b.true_lb;
  std::int64_t hi = b.true_lb + b.true_extent;
  for (std::int64_t e : {std::int64_t{0}, std::int64_t{count} - 1}) {
    lo_ = std::min(lo_, b.true_lb + e * b.extent);
    hi = std::max(hi, b.true_lb + b.true_extent + e * b.extent);
  }
  bytes_ = hi - lo_;
  dense_ = bytes_ == std::int64_t{count} * b.size;
  buffer_ = const_cast<std::byte*>(static_cast<const std::byte*>(buffer));
  input_ = input;
  output_ = output;
  gpu_ = object.gpu;
  return true;
}

int Mirror::load(MPI_Comm comm) {
  std::string error;
  const auto bytes = static_cast<std::size_t>(std::max<std::int64_t>(bytes_, 1));
  if (!acquire_wire(gpu_ ? WireMemory::Pinned : WireMemory::Host, -1, bytes, wire_, error) &&
      !acquire_wire(WireMemory::Host, -1, bytes, wire_, error)) {
    return report_error(comm, "reduction host copy", error);
  }
  // An output's gaps must come back unchanged, so it is loaded too unless it has none.
  if (!input_ && (!output_ || dense_)) return MPI_SUCCESS;
  if (!gpu_) {
    std::memcpy(wire_.data(), buffer_ + lo_, static_cast<std::size_t>(bytes_));
    return MPI_SUCCESS;
  }
  if (!engine::cuda::copy(wire_.data(), buffer_ + lo_, static_cast<std::size_t>(bytes_), error)) {
    return report_error(comm, "reduction host copy", error);
  }
  return MPI_SUCCESS;
}

int Mirror::store(MPI_Comm comm) {
  if (!output_) return MPI_SUCCESS;
  if (!gpu_) {
    std::memcpy(buffer_ + lo_, wire_.data(), static_cast<std::size_t>(bytes_));
    return MPI_SUCCESS;
  }
  std::string error;
  if (!engine::cuda::copy(buffer_ + lo_, wire_.data(), static_cast<std::size_t>(bytes_), error)) {
    return report_error(comm, "reduction copy back", error);
  }
  return MPI_SUCCESS;
}

}  // namespace strider::transfer::collective
