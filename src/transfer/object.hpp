// An object in user memory as the interposed calls see it (count elements of a type at a
// buffer), and the one place that packs or unpacks it whatever the memories on either side:
// MPI_Pack/MPI_Unpack and point-to-point share it.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>

#include "plan/plan.hpp"
#include "runtime/memory_kind.hpp"

namespace strider::transfer {

struct Object {
  std::shared_ptr<const plan::Plan> plan;  // keeps the layout alive after MPI_Type_free
  MPI_Datatype type = MPI_DATATYPE_NULL;   // for the MPI's pack in the staged path
  int count = 0;
  bool oversized = false;    // more than INT_MAX elements or packed bytes: refused on GPU memory
  runtime::BufferView view;  // classified at the first byte the object's packing touches
  bool gpu = false;          // GPU-resident (device or managed memory)
  bool persistent = false;   // under a persistent request: its wire is never device memory
  std::int64_t bytes() const { return static_cast<std::int64_t>(count) * plan->bounds.size; }
};

// The bytes `count` elements of a type with `bounds` span from their origin, [lo, hi), gaps
// included.
struct ByteRange {
  std::int64_t lo = 0, hi = 0;
};
ByteRange span_of(const decode::Bounds& bounds, int count);

// The object at `buffer`, or nothing when Strider has no plan for `type` (uncommitted or
// invalid: the MPI reports that), the type is empty, or the buffer is MPI_BOTTOM-relative and
// unmapped. Managed memory is GPU memory here unless STRIDER_MANAGED says the host moves it:
// always (host), or where the host holds the pages of the object's first and last bytes (auto).
bool view_object(const void* buffer, int count, MPI_Datatype type, Object& out);

// Engine choice for host objects.
enum class HostPacking {
  Policy,  // the host engine where it beats the MPI (host_engine_serves), else the MPI
  Strider  // the host engine whenever the plan allows (wire buffers, where the MPI's pack
           // would be an extra copy anyway)
};

// Packs the object into `packed` (bytes() bytes; `packed_view` describes that memory: set
// device_visible false to route a GPU pack through scratch and one copy). Where the MPI must
// pack (types Strider cannot lay out) it is called with `type`, which must be alive. Errors are
// reported through `comm`'s handler and returned.
int pack_object(const Object& object, std::byte* packed, const runtime::BufferView& packed_view,
                HostPacking host, MPI_Comm comm);
int unpack_object(const Object& object, const std::byte* packed,
                  const runtime::BufferView& packed_view, HostPacking host, MPI_Comm comm);

// The object shifted by `first` extents with `count` elements (for a partial last element).
Object element_range(const Object& object, int first, int count);

}  // namespace strider::transfer
