#include "transfer/collective/direct_layout.hpp"

#include <algorithm>

namespace strider::transfer::collective {
namespace {

canon::StridedBlock element_of(const DirectLayout& layout) {
  canon::StridedBlock sb;
  sb.offset = layout.offset;
  sb.block = layout.block;
  for (std::int64_t k = 0; k < layout.dims; ++k) {
    sb.dims.push_back({layout.dim[2 * k], layout.dim[2 * k + 1]});
  }
  return sb;
}

}  // namespace

ByteSpan touched_bytes(const canon::StridedBlock& element, std::int64_t extent,
                       std::int64_t count) {
  ByteSpan span{element.offset, element.offset + element.block};
  const auto reach = [&](std::int64_t n, std::int64_t stride) {
    const std::int64_t r = (n - 1) * stride;
    span.lo += std::min<std::int64_t>(0, r);
    span.hi += std::max<std::int64_t>(0, r);
  };
  for (const canon::Dim& d : element.dims) reach(d.count, d.stride);
  reach(count, extent);
  return span;
}

DirectLayout layout_of(const canon::StridedBlock& element, std::int64_t extent,
                       std::int64_t count) {
  DirectLayout out;
  out.offset = element.offset;
  out.block = element.block;
  out.dims = static_cast<std::int64_t>(element.dims.size());
  for (std::size_t k = 0; k < element.dims.size(); ++k) {
    out.dim[2 * k] = element.dims[k].count;
    out.dim[2 * k + 1] = element.dims[k].stride;
  }
  out.extent = extent;
  out.count = count;
  return out;
}

canon::CanonicalForm direct_form(const DirectLayout& layout) {
  canon::CanonicalForm form;
  form.pieces.push_back(element_of(layout));
  canon::derive_summaries(form);
  return form;
}

bool consistent(const DirectLayout& layout, std::int64_t bytes) {
  if (layout.dims < 0 || layout.dims > static_cast<std::int64_t>(canon::kMaxDims) ||
      layout.count <= 0 || layout.block <= 0 || layout.allocation_bytes <= 0) {
    return false;
  }
  for (std::int64_t k = 0; k < layout.dims; ++k) {
    if (layout.dim[2 * k] <= 0) return false;
  }
  const canon::StridedBlock element = element_of(layout);
  if (element.packed_bytes() * layout.count != bytes) return false;
  const ByteSpan span = touched_bytes(element, layout.extent, layout.count);
  return layout.origin + span.lo >= 0 && layout.origin + span.hi <= layout.allocation_bytes;
}

}  // namespace strider::transfer::collective
