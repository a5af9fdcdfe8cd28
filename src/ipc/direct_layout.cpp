#include "ipc/direct_layout.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "ipc/settings.hpp"

namespace strider::ipc {

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

namespace {

// `count` elements of a one-piece form as one strided block: the piece's dims, then the repeat
// dims, then the elements (packed order runs the piece's dims fastest, the elements slowest),
// normalized (dense elements become one block). Nothing when that takes more than kMaxDims dims.
std::optional<canon::StridedBlock> fold_one_piece(const canon::CanonicalForm& form,
                                                  std::int64_t extent, std::int64_t count) {
  if (form.pieces.size() != 1) return std::nullopt;
  canon::StridedBlock sb = form.pieces.front();
  std::size_t dims = sb.dims.size() + (count > 1 ? 1 : 0);
  for (const canon::Dim& d : form.repeat) dims += d.count > 1 ? 1 : 0;
  if (dims > canon::kMaxDims) return std::nullopt;
  for (const canon::Dim& d : form.repeat) {
    if (d.count > 1) sb.dims.push_back(d);
  }
  if (count > 1) sb.dims.push_back({count, extent});
  return canon::normalized(sb);
}

}  // namespace

std::vector<canon::StridedBlock> flatten(const canon::CanonicalForm& form, std::int64_t extent,
                                         std::int64_t count, std::size_t max) {
  std::vector<canon::StridedBlock> out;
  if (form.pieces.empty() || count <= 0 || max == 0) return out;
  if (auto folded = fold_one_piece(form, extent, count)) {
    out.push_back(*folded);
    return out;
  }
  const std::int64_t reps = form.repetitions();
  if (reps <= 0 || static_cast<double>(count) * static_cast<double>(reps) *
                           static_cast<double>(form.pieces.size()) >
                       static_cast<double>(max)) {
    return out;
  }
  for (std::int64_t e = 0; e < count; ++e) {
    for (std::int64_t r = 0; r < reps; ++r) {
      // The repetition's offset: r's digits over the repeat dims, innermost first.
      std::int64_t shift = e * extent, rest = r;
      for (const canon::Dim& d : form.repeat) {
        shift += (rest % d.count) * d.stride;
        rest /= d.count;
      }
      for (canon::StridedBlock sb : form.pieces) {
        sb.offset += shift;
        out.push_back(sb);
      }
    }
  }
  return out;
}

std::vector<canon::StridedBlock> split_outermost(const canon::StridedBlock& sb) {
  if (sb.dims.empty()) return {sb};
  canon::StridedBlock inner = sb;
  const canon::Dim outer = inner.dims.back();
  inner.dims.pop_back();
  std::vector<canon::StridedBlock> out;
  for (std::int64_t i = 0; i < outer.count; ++i) {
    canon::StridedBlock part = inner;
    part.offset += i * outer.stride;
    out.push_back(part);
  }
  return out;
}

Segment segment_of(const canon::StridedBlock& sb, std::int64_t allocation) {
  Segment s;
  s.offset = sb.offset;
  s.block = sb.block;
  s.dims = static_cast<std::int64_t>(sb.dims.size());
  for (std::size_t k = 0; k < sb.dims.size(); ++k) {
    s.dim[2 * k] = sb.dims[k].count;
    s.dim[2 * k + 1] = sb.dims[k].stride;
  }
  s.allocation = allocation;
  return s;
}

canon::StridedBlock block_of(const Segment& segment) {
  canon::StridedBlock sb;
  sb.offset = segment.offset;
  sb.block = segment.block;
  for (std::int64_t k = 0; k < segment.dims; ++k) {
    sb.dims.push_back({segment.dim[2 * k], segment.dim[2 * k + 1]});
  }
  return sb;
}

bool consistent(const DirectLayout& layout, std::int64_t bytes) {
  if (layout.segments <= 0 ||
      layout.segments > static_cast<std::int64_t>(DirectPolicy::kMaxSegments) ||
      layout.allocations <= 0 ||
      layout.allocations > static_cast<std::int64_t>(DirectPolicy::kMaxAllocations)) {
    return false;
  }
  std::int64_t total = 0;
  for (std::int64_t i = 0; i < layout.segments; ++i) {
    const Segment& s = layout.segment[i];
    if (s.dims < 0 || s.dims > static_cast<std::int64_t>(canon::kMaxDims) || s.block <= 0 ||
        s.allocation < 0 || s.allocation >= layout.allocations) {
      return false;
    }
    for (std::int64_t k = 0; k < s.dims; ++k) {
      if (s.dim[2 * k] <= 0) return false;
    }
    const canon::StridedBlock sb = block_of(s);
    const ByteSpan span = touched_bytes(sb, 0, 1);
    if (span.lo < 0 || span.hi > layout.allocation[s.allocation].bytes) return false;
    total += sb.packed_bytes();
  }
  return total == bytes;
}

std::int64_t min_block_across_gpus() {
  const auto& forced = settings().direct_min_block;
  return forced ? static_cast<std::int64_t>(*forced) : DirectPolicy::kMinBlockAcrossGpus;
}

std::int64_t smallest_block(const DirectLayout& layout) {
  std::int64_t smallest = 0;
  for (std::int64_t i = 0; i < layout.segments; ++i) {
    const std::int64_t b = layout.segment[i].block;
    if (smallest == 0 || b < smallest) smallest = b;
  }
  return smallest;
}

std::int64_t smallest_block(const canon::CanonicalForm& form, std::int64_t extent,
                            std::int64_t count) {
  if (count > 0) {
    if (auto folded = fold_one_piece(form, extent, count)) return folded->block;
  }
  std::int64_t smallest = 0;
  for (const canon::StridedBlock& sb : form.pieces) {
    if (smallest == 0 || sb.block < smallest) smallest = sb.block;
  }
  return smallest;
}

bool flattens_within(const canon::CanonicalForm& form, std::int64_t extent, std::int64_t count,
                     std::size_t max) {
  if (form.pieces.empty() || count <= 0 || max == 0) return false;
  if (fold_one_piece(form, extent, count)) return true;
  const std::int64_t reps = form.repetitions();
  return reps > 0 && static_cast<double>(count) * static_cast<double>(reps) *
                             static_cast<double>(form.pieces.size()) <=
                         static_cast<double>(max);
}

bool blocks_at_least(const canon::CanonicalForm& form, std::int64_t extent, std::int64_t count,
                     std::int64_t bytes) {
  if (count > 0) {
    if (auto folded = fold_one_piece(form, extent, count)) return folded->block >= bytes;
  }
  if (form.pieces.empty()) return false;
  for (const canon::StridedBlock& sb : form.pieces) {
    if (sb.block < bytes) return false;
  }
  return true;
}

canon::CanonicalForm mapped_form(const DirectLayout& layout, const std::byte* const* bases) {
  canon::CanonicalForm form;
  for (std::int64_t i = 0; i < layout.segments; ++i) {
    canon::StridedBlock sb = block_of(layout.segment[i]);
    // Mappings are distinct addresses of one process: their distance fits an int64.
    sb.offset += static_cast<std::int64_t>(
        reinterpret_cast<std::uintptr_t>(bases[layout.segment[i].allocation]) -
        reinterpret_cast<std::uintptr_t>(bases[0]));
    form.pieces.push_back(sb);
  }
  canon::derive_summaries(form);
  return form;
}

}  // namespace strider::ipc
