// A batch's index arithmetic, shared by the kernel and the host emulation the tests run: which
// job a block serves, and where word p of a job lives on either side.
#pragma once

#include <cstdint>

#include "engine/cuda/batch_plan.hpp"
#include "engine/cuda/word_offset.hpp"

namespace strider::engine::cuda {

// The job whose blocks hold `block`: the last one starting at or before it (every job has at
// least one block, so the first blocks increase strictly).
STRIDER_HD int find_job(const BatchJob* jobs, int njobs, std::uint32_t block) {
  int lo = 0, hi = njobs - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (jobs[mid].first_block <= block) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// The address of word `p` through a map record (a MapHead, then the kind's launch).
template <int W, class Div, class Index>
STRIDER_HD std::byte* map_address(const std::byte* record, Index p) {
  const MapHead& head = *reinterpret_cast<const MapHead*>(record);
  const std::byte* launch = record + sizeof(MapHead);
  switch (head.kind) {
    case MapKind::Strided: {
      const auto& l = *reinterpret_cast<const StridedLaunch<Div>*>(launch);
      return head.base + strided_offset<W, Div, kMaxLaunchDims>(l.offset, l.words_per_block,
                                                                l.ndims, l.count, l.stride, p);
    }
    case MapKind::List:
      return head.base + list_offset<W>(*reinterpret_cast<const ListLaunch<Div>*>(launch), p);
    default:
      return head.base + static_cast<std::int64_t>(p) * W;
  }
}

}  // namespace strider::engine::cuda
