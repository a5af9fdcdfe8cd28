#include "transfer/staged.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "engine/cuda/gpu_engine.hpp"
#include "runtime/log.hpp"
#include "transfer/object.hpp"

namespace strider::transfer {
namespace {

// Host copy of the bytes `count` elements of `type` span at `origin`.
struct HostSpan {
  std::vector<std::byte> bytes;
  std::int64_t lo = 0;  // offset of bytes[0] from the origin
  std::byte* origin() { return bytes.data() - lo; }
};

// False if the span does not fit in host memory.
bool host_span(const decode::Bounds& b, int count, HostSpan& span) {
  const ByteRange range = span_of(b, count);
  span.lo = range.lo;
  try {
    span.bytes.resize(static_cast<std::size_t>(range.hi - range.lo));
  } catch (const std::bad_alloc&) {
    return false;
  }
  return true;
}

// A host copy of the GPU packed bytes from `position` that `count` elements can cover (their
// packed size, or what is left of the buffer's `size`). False with `error` if the copy failed.
bool host_packed(const std::byte* packed, int size, int position, const decode::Bounds& b,
                 int count, std::vector<std::byte>& out, std::string& error) {
  out.resize(std::min<std::size_t>(static_cast<std::size_t>(b.size) * count,
                                   static_cast<std::size_t>(std::max(0, size - position))));
  return engine::cuda::copy(out.data(), packed + position, out.size(), error);
}

int cuda_failure(MPI_Comm comm, const std::string& error) {
  return report_error(comm, "staged copy", error);
}

}  // namespace

namespace {
thread_local HeldErrorHandlers* innermost_holder = nullptr;
}  // namespace

HeldErrorHandlers::HeldErrorHandlers() : outer_(innermost_holder) { innermost_holder = this; }
HeldErrorHandlers::~HeldErrorHandlers() { innermost_holder = outer_; }

void call_error_handlers(const std::vector<HeldError>& errors) {
  for (const HeldError& e : errors) PMPI_Comm_call_errhandler(e.comm, e.code);
}

int report_error(MPI_Comm comm, const char* what, const std::string& detail) {
  runtime::log(runtime::LogLevel::Error, "%s failed: %s", what, detail.c_str());
  if (innermost_holder) {
    innermost_holder->held_.push_back({comm, MPI_ERR_OTHER});
  } else {
    PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
  }
  return MPI_ERR_OTHER;
}

int staged_pack(PackFn next, const decode::Bounds& bounds, const runtime::BufferView& user,
                int count, MPI_Datatype type, std::byte* packed, runtime::MemoryKind packed_kind,
                int outsize, int* position, MPI_Comm comm) {
  HostSpan span;
  // Never the MPI with device pointers: without a host copy of the span, report.
  if (!host_span(bounds, count, span)) return report_error(comm, "staged pack", "no host span");
  std::string error;
  if (!engine::cuda::copy(span.bytes.data(), user.host + span.lo, span.bytes.size(), error)) {
    return cuda_failure(comm, error);
  }
  if (runtime::host_accessible(packed_kind)) {
    return next(span.origin(), count, type, packed, outsize, position, comm);
  }
  // Packed buffer on the GPU: pack into host memory, then copy the new bytes over. The host
  // buffer starts as a copy of the packed bytes it stands for: an MPI may leave bytes of the
  // packed form untouched (MPICH's Yaksa writes 10 of a long double's 16), and those must keep
  // what the application's buffer held, as when the MPI packs into it directly.
  std::vector<std::byte> out;
  if (!host_packed(packed, outsize, *position, bounds, count, out, error)) {
    return cuda_failure(comm, error);
  }
  int written = 0;
  const int rc =
      next(span.origin(), count, type, out.data(), static_cast<int>(out.size()), &written, comm);
  if (rc != MPI_SUCCESS) return rc;
  if (!engine::cuda::copy(packed + *position, out.data(), static_cast<std::size_t>(written),
                          error)) {
    return cuda_failure(comm, error);
  }
  *position += written;
  return MPI_SUCCESS;
}

int staged_unpack(UnpackFn next, const decode::Bounds& bounds, const std::byte* packed,
                  runtime::MemoryKind packed_kind, int insize, int* position,
                  const runtime::BufferView& user, int count, MPI_Datatype type, MPI_Comm comm) {
  HostSpan span;
  if (!host_span(bounds, count, span)) return report_error(comm, "staged unpack", "no host span");
  std::string error;
  // The span's current bytes, so the gaps between typemap bytes come back unchanged.
  if (!engine::cuda::copy(span.bytes.data(), user.host + span.lo, span.bytes.size(), error)) {
    return cuda_failure(comm, error);
  }
  int rc;
  if (runtime::host_accessible(packed_kind)) {
    rc = next(packed, insize, position, span.origin(), count, type, comm);
  } else {
    std::vector<std::byte> in;
    if (!host_packed(packed, insize, *position, bounds, count, in, error)) {
      return cuda_failure(comm, error);
    }
    int read = 0;
    rc = next(in.data(), static_cast<int>(in.size()), &read, span.origin(), count, type, comm);
    if (rc == MPI_SUCCESS) *position += read;
  }
  if (rc != MPI_SUCCESS) return rc;
  if (!engine::cuda::copy(user.host + span.lo, span.bytes.data(), span.bytes.size(), error)) {
    return cuda_failure(comm, error);
  }
  return MPI_SUCCESS;
}

}  // namespace strider::transfer
