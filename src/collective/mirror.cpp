#include "collective/mirror.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "collective/batch.hpp"
#include "engine/cuda/gpu_engine.hpp"
#include "transfer/settings.hpp"
#include "transfer/staged.hpp"

namespace strider::collective {
namespace {

// One copy of a gapless span, host or GPU memory on either side.
int copy_span(std::byte* to, const std::byte* from, std::int64_t bytes, bool gpu, MPI_Comm comm) {
  if (!gpu) {
    std::memcpy(to, from, static_cast<std::size_t>(bytes));
    return MPI_SUCCESS;
  }
  std::string error;
  if (!engine::cuda::copy(to, from, static_cast<std::size_t>(bytes), error)) {
    return transfer::report_error(comm, "reduction host copy", error);
  }
  return MPI_SUCCESS;
}

}  // namespace

bool Mirror::describe(const void* buffer, int count, MPI_Datatype type, bool input, bool output) {
  if (count <= 0 || buffer == MPI_IN_PLACE) return false;
  if (!transfer::view_object(buffer, count, type, object_)) return false;
  if (!object_.gpu && transfer::settings().host_collectives != runtime::HostPath::Pack)
    return false;
  const transfer::ByteRange span = transfer::span_of(object_.plan->bounds, count);
  lo_ = span.lo;
  bytes_ = span.hi - span.lo;
  dense_ = bytes_ == object_.bytes();
  input_ = input;
  output_ = output;
  return true;
}

int Mirror::acquire(MPI_Comm comm, bool hold) {
  std::string error;
  const auto bytes = static_cast<std::size_t>(std::max<std::int64_t>(bytes_, 1));
  if (!ipc::acquire_wire(object_.gpu ? ipc::WireMemory::Pinned : ipc::WireMemory::Host, -1, bytes,
                         wire_, error) &&
      !ipc::acquire_wire(ipc::WireMemory::Host, -1, bytes, wire_, error)) {
    return transfer::report_error(comm, "reduction host copy", error);
  }
  // Where the MPI packs the type (Strider has no layout for it), the type must live until the
  // store of a nonblocking call, after the application may have freed its handle.
  if (hold && !object_.plan->supported && !dense_) {
    if (const int rc = held_.dup(object_.type)) return rc;
    object_.type = held_.get();
  }
  mirror_ = object_;
  mirror_.view = runtime::view_buffer(origin(), lo_);
  mirror_.gpu = false;
  return MPI_SUCCESS;
}

int Mirror::load(MPI_Comm comm) {
  if (!input_) return MPI_SUCCESS;
  if (dense_) return copy_span(wire_.data(), object_.view.host + lo_, bytes_, object_.gpu, comm);
  return collective::copy_piece(object_, mirror_, comm);
}

int Mirror::store(MPI_Comm comm) {
  if (!output_) return MPI_SUCCESS;
  if (dense_) return copy_span(object_.view.host + lo_, wire_.data(), bytes_, object_.gpu, comm);
  return collective::copy_piece(mirror_, object_, comm);
}

}  // namespace strider::collective
