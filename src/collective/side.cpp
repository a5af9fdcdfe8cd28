#include "collective/side.hpp"

#include <algorithm>
#include <climits>
#include <string>

#include "collective/batch.hpp"
#include "collective/wire_types.hpp"
#include "transfer/cuda_aware.hpp"
#include "transfer/perf_model.hpp"
#include "transfer/settings.hpp"
#include "transfer/staged.hpp"
#include "transfer/state.hpp"
#include "transfer/wire_view.hpp"

namespace strider::collective {
namespace {

// Pinned wire memory kernels write directly (one-shot) or through scratch and one copy
// (staged), or, on a CUDA-aware MPI, device memory the MPI reads: as the model chooses for the
// largest piece; never device memory where `off_device`. (Device memory for every side of a
// CUDA-aware MPI, as before, made the halo's Neighbor_alltoallw 4.5 times slower than the same
// bytes through pinned host memory on Open MPI 4.1.4 --with-cuda, two H100s, 2026-11-27.)
transfer::Method method_for(const std::vector<collective::Piece>& pieces, bool receive,
                            bool off_device) {
  const bool aware = transfer::mpi_cuda_aware() && !off_device;
  const transfer::MethodRequest requested = transfer::requested_method();
  const Piece* largest = nullptr;
  for (const Piece& p : pieces) {
    if (p.bytes() > 0 && (!largest || p.bytes() > largest->bytes())) largest = &p;
  }
  transfer::Method automatic = aware ? transfer::Method::Device : transfer::Method::OneShot;
  if (!requested && largest && largest->object.plan->supported) {
    automatic = transfer::perf_model().choose(
        model::object_shape(largest->object.plan->shape, largest->object.count),
        model::Placement::SameNode, aware, receive);
  }
  return transfer::choose_method(requested, aware, automatic);
}

}  // namespace

bool Side::describe(const void* buffer, std::span<const PieceSpec> specs) {
  pieces_.assign(specs.size(), Piece{});
  bytes_ = 0;
  bool classified = false;
  runtime::BufferView base;  // the view of the first piece's origin
  std::int64_t base_displacement = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const PieceSpec& s = specs[i];
    Piece& piece = pieces_[i];
    auto plan = transfer::plan_for(s.type);
    if (!plan) return false;  // the MPI reports the unknown type
    piece.size = plan->bounds.size;
    piece.offset = bytes_;
    if (s.count <= 0 || piece.size == 0) continue;  // travels as zero bytes
    const auto* origin = static_cast<const std::byte*>(buffer) + s.displacement;
    // One classification for the side (its pieces lie in one buffer), except at MPI_BOTTOM,
    // where each piece's absolute addresses may lie anywhere.
    if (!classified || buffer == MPI_BOTTOM) {
      if (!transfer::view_object(origin, s.count, s.type, piece.object)) return false;
      if (classified && piece.object.gpu != gpu_) return false;  // mixed memories: the MPI's
      base = piece.object.view;
      base_displacement = s.displacement;
      gpu_ = piece.object.gpu;
      classified = true;
    } else {
      piece.object.plan = std::move(plan);
      piece.object.type = s.type;
      piece.object.count = s.count;
      piece.object.view = runtime::shifted(base, s.displacement - base_displacement);
      piece.object.gpu = gpu_;
    }
    bytes_ += piece.bytes();
  }
  converted_ = gpu_ || transfer::settings().host_collectives == runtime::HostPath::Pack;
  return true;
}

int Side::acquire(MPI_Comm comm, bool receive) {
  method_ = gpu_ ? method_for(pieces_, receive, off_device_) : transfer::Method::Host;
  std::string error;
  const auto bytes = static_cast<std::size_t>(std::max<std::int64_t>(bytes_, 1));
  const int device = std::max(0, [&] {
    for (const Piece& p : pieces_) {
      if (p.bytes() > 0) return p.object.view.info.device;
    }
    return 0;
  }());
  if (transfer::acquire_wire_for(method_, device, bytes, wire_, error)) return MPI_SUCCESS;
  return transfer::report_error(comm, "collective wire buffer", error);
}

int Side::pack(MPI_Comm comm) {
  const runtime::BufferView view = transfer::wire_view(wire_, method_);
  if (gpu_) return pack_batch(pieces_, view, comm);
  for (const Piece& p : pieces_) {
    if (p.skip || p.bytes() == 0) continue;
    const runtime::BufferView at = runtime::shifted(view, p.offset);
    if (const int rc =
            transfer::pack_object(p.object, at.host, at, transfer::HostPacking::Strider, comm))
      return rc;
  }
  return MPI_SUCCESS;
}

int Side::unpack(MPI_Comm comm) {
  const runtime::BufferView view = transfer::wire_view(wire_, method_);
  if (gpu_) return unpack_batch(pieces_, view, comm);
  for (const Piece& p : pieces_) {
    if (p.skip || p.bytes() == 0) continue;
    const runtime::BufferView at = runtime::shifted(view, p.offset);
    if (const int rc =
            transfer::unpack_object(p.object, at.host, at, transfer::HostPacking::Strider, comm))
      return rc;
  }
  return MPI_SUCCESS;
}

int Side::preload(MPI_Comm comm) {
  std::vector<Piece> marked;
  for (const Piece& p : pieces_) {
    if (!p.preload) continue;
    marked.push_back(p);
    marked.back().skip = false;
  }
  if (marked.empty()) return MPI_SUCCESS;
  const runtime::BufferView view = transfer::wire_view(wire_, method_);
  if (gpu_) return pack_batch(marked, view, comm);
  for (const Piece& p : marked) {
    if (p.bytes() == 0) continue;
    const runtime::BufferView at = runtime::shifted(view, p.offset);
    if (const int rc =
            transfer::pack_object(p.object, at.host, at, transfer::HostPacking::Strider, comm))
      return rc;
  }
  return MPI_SUCCESS;
}

int Side::hold_types() {
  for (Piece& p : pieces_) {
    if (p.bytes() == 0 || (p.object.plan->supported && p.object.gpu)) continue;
    transfer::HeldType& held = held_.emplace_back();
    if (const int rc = held.dup(p.object.type)) return rc;
    p.object.type = held.get();
  }
  return MPI_SUCCESS;
}

bool Side::wire_count(std::size_t i, int& count, int& displacement, MPI_Datatype& type) const {
  MPI_Aint bytes = 0;
  if (!wire_bytes(i, count, bytes, type)) return false;
  const std::int64_t unit = as_bytes_ ? 1 : std::max<std::int64_t>(pieces_[i].size, 1);
  if (bytes % unit != 0 || bytes / unit > INT_MAX) return false;
  displacement = static_cast<int>(bytes / unit);
  return true;
}

bool Side::wire_bytes(std::size_t i, int& count, MPI_Aint& displacement, MPI_Datatype& type) const {
  const Piece& p = pieces_[i];
  displacement = static_cast<MPI_Aint>(p.offset);
  // An empty type travels as zero bytes, whatever its count.
  if (p.size == 0) {
    count = 0;
    type = MPI_BYTE;
    return true;
  }
  if (as_bytes_) {
    const std::int64_t bytes = p.size * std::max(p.object.count, 0);
    if (bytes > INT_MAX) return false;
    count = static_cast<int>(bytes);
    type = MPI_BYTE;
    return true;
  }
  count = p.object.count;
  type = wire_type(p.size);
  return type != MPI_DATATYPE_NULL;
}

}  // namespace strider::collective
