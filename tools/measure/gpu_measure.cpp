#include "measure/gpu_measure.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "measure/gpu_object.hpp"
#include "measure/launch.hpp"
#include "model/grid.hpp"

namespace strider::measure {
namespace {

using model::Direction;
using model::Method;

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(s); }
};

double largest_extent() {
  std::int64_t largest = 0;
  for (int dims : model::grid::shape_dims()) {
    for (double ratio : model::grid::stride_ratios()) {
      for (double block : model::grid::block_bytes()) {
        for (double bytes : model::grid::object_bytes()) {
          if (block > bytes / 2) continue;
          const ObjectSpec s{static_cast<std::int64_t>(block), static_cast<std::int64_t>(bytes),
                             ratio, dims};
          largest = std::max(largest, s.extent());
        }
      }
    }
  }
  return static_cast<double>(largest);
}

// Block lists of more blocks are not built: the lists and their plans take long to make.
constexpr double kMaxIrregularBlocks = 1 << 18;

}  // namespace

double weight_of(double bytes) { return 1 + bytes / (1 << 20); }

double copies_weight() {
  double w = 0;
  for (double s : model::grid::transfer_bytes()) w += 2 * weight_of(s);
  return w;
}

double pack_tables_weight() {
  double w = 0;
  // Regular tables per dims and ratio, plus the irregular (dims 2) ones per ratio.
  const double families = static_cast<double>((model::grid::shape_dims().size() + 1) *
                                              model::grid::stride_ratios().size());
  for (double block : model::grid::block_bytes()) {
    for (double bytes : model::grid::object_bytes()) {
      if (block <= bytes / 2) w += 6 * families * weight_of(bytes);
    }
  }
  return w;
}

double measure_launch_sync(const RepeatLimits& limits) {
  Stream stream;
  return repeat_median(
      [&] {
        return seconds_of([&] { check_cuda(launch_empty_and_wait(stream.s), "empty kernel"); });
      },
      limits);
}

void measure_copies(model::PerfData& data, const RepeatLimits& limits, const Advance& advance) {
  const auto sizes = model::grid::transfer_bytes();
  const auto largest = static_cast<std::size_t>(sizes.back());
  Stream stream;
  Allocation host = Allocation::pinned(largest);
  Allocation device = Allocation::device(largest);
  fill_random(device.data(), largest, 1);
  data.d2h = {};
  data.h2d = {};
  for (double s : sizes) {
    const auto bytes = static_cast<std::size_t>(s);
    auto copy = [&](void* dst, const void* src) {
      return repeat_median(
          [&] {
            return seconds_of([&] {
              check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream.s),
                         "cudaMemcpyAsync");
              check_cuda(cudaStreamSynchronize(stream.s), "cudaStreamSynchronize");
            });
          },
          limits);
    };
    data.d2h.x.push_back(s);
    data.d2h.y.push_back(copy(host.data(), device.data()));
    data.h2d.x.push_back(s);
    data.h2d.y.push_back(copy(device.data(), host.data()));
    advance(2 * weight_of(s), "pinned copies");
  }
}

void measure_pack_tables(model::PerfData& data, const RepeatLimits& limits,
                         const Advance& advance) {
  const auto blocks = model::grid::block_bytes();
  const auto objects = model::grid::object_bytes();
  const auto largest_object = static_cast<std::size_t>(objects.back());
  Allocation user = Allocation::device(static_cast<std::size_t>(largest_extent()));
  Allocation packed_device = Allocation::device(largest_object);
  Allocation packed_mapped = Allocation::pinned(largest_object);
  fill_random(user.data(), user.size(), 2);
  fill_random(packed_device.data(), largest_object, 3);

  const std::array<Method, 3> targets{Method::Device, Method::OneShot, Method::Staged};
  const std::array<Direction, 2> directions{Direction::Pack, Direction::Unpack};
  struct Family {
    int dims;
    bool irregular;
  };
  std::vector<Family> families;
  for (int dims : model::grid::shape_dims()) families.push_back({dims, false});
  families.push_back({2, true});
  for (const Family& family : families) {
    for (double ratio : model::grid::stride_ratios()) {
      // One table per target and direction for this family and ratio, filled cell by cell.
      std::array<model::PackTable, 6> tables;
      for (int t = 0; t < 6; ++t) {
        tables[t] = {targets[t / 2], directions[t % 2], family.dims,
                     ratio,          family.irregular,  {blocks, objects, {}}};
        tables[t].seconds.values.assign(blocks.size() * objects.size(), 0);
      }
      for (std::size_t r = 0; r < blocks.size(); ++r) {
        for (std::size_t c = 0; c < objects.size(); ++c) {
          const std::size_t cell = r * objects.size() + c;
          if (blocks[r] > objects[c] / 2) {
            // Two blocks is the most a grid object of this size can have: that row's value.
            const auto two = static_cast<std::size_t>(
                std::find(blocks.begin(), blocks.end(), objects[c] / 2) - blocks.begin());
            for (auto& t : tables)
              t.seconds.values[cell] = t.seconds.values[two * objects.size() + c];
            continue;
          }
          if (family.irregular && objects[c] / blocks[r] > kMaxIrregularBlocks) {
            // Too many pieces to build in reasonable time: the largest measured object of this
            // block length, scaled by the bytes (block lists scale linearly in their pieces).
            std::size_t measured = c;
            while (objects[measured] / blocks[r] > kMaxIrregularBlocks) --measured;
            for (auto& t : tables) {
              t.seconds.values[cell] = t.seconds.values[r * objects.size() + measured] *
                                       (objects[c] / objects[measured]);
            }
            advance(6 * weight_of(objects[c]), "pack block lists");
            continue;
          }
          const ObjectSpec spec{static_cast<std::int64_t>(blocks[r]),
                                static_cast<std::int64_t>(objects[c]), ratio, family.dims,
                                family.irregular};
          if (spec.extent() > static_cast<std::int64_t>(user.size())) {
            throw std::runtime_error("a measurement object exceeds its allocation");
          }
          GpuObject object(spec, user.data());
          for (int t = 0; t < 6; ++t) {
            // As the runtime's wire buffers: device memory, or pinned memory the kernel writes
            // (one-shot) or that is reached through scratch and one copy (staged).
            const runtime::BufferView packed =
                tables[t].target == Method::Device
                    ? wire_view(model::Method::Device, packed_device)
                    : wire_view(tables[t].target == Method::OneShot ? model::Method::OneShot
                                                                    : model::Method::Staged,
                                packed_mapped);
            const bool is_pack = tables[t].direction == Direction::Pack;
            tables[t].seconds.values[cell] = repeat_median(
                [&] {
                  return seconds_of([&] {
                    if (is_pack) {
                      pack(object, packed);
                    } else {
                      unpack(object, packed);
                    }
                  });
                },
                limits);
          }
          char what[64];
          std::snprintf(what, sizeof what, "pack %s%dD r%g block %g",
                        family.irregular ? "block list " : "", family.dims, ratio, blocks[r]);
          advance(6 * weight_of(objects[c]), what);
        }
      }
      for (auto& t : tables) data.pack.push_back(std::move(t));
    }
  }
}

}  // namespace strider::measure
