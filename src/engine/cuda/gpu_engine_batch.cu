// The synchronous batch calls over enqueue_batch: the items the GPU's kernels reach go in one
// launch (through scratch when the packed buffer is pageable or another GPU's), the others
// through the host engine; then the call waits.
#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "engine/cpu/pack.hpp"
#include "engine/cuda/batch.hpp"
#include "engine/cuda/gpu_engine.hpp"
#include "engine/cuda/sync_call.hpp"
#include "runtime/profile.hpp"

namespace strider::engine::cuda {
namespace {

struct Range {
  std::int64_t offset, bytes;
};

std::int64_t bytes_of(const BatchItem& item) { return item.count * item.form->size; }

// The GPU of a batch: the first GPU-resident item's, else the packed buffer's, else the current.
int device_of(Span<const BatchItem> items, const BufferView& packed) {
  for (const BatchItem& item : items) {
    if (runtime::gpu_resident(item.user.info.kind) && item.user.info.device >= 0) {
      return item.user.info.device;
    }
  }
  return device_for(BufferView{}, packed);
}

// Every item is the kernels' or the host engine's; false (nothing done) for one on another GPU.
bool all_reachable(Span<const BatchItem> items, int device, std::string& error) {
  for (const BatchItem& item : items) {
    if (bytes_of(item) > 0 && !visible_on(item.user, device) &&
        !runtime::host_accessible(item.user.info.kind)) {
      error = "a batch item on another GPU than " + std::to_string(device);
      return false;
    }
  }
  return true;
}

// The packed ranges of the kernels' items, merged where they touch: one copy each between the
// scratch and a packed buffer the kernels cannot see.
std::vector<Range> merged(std::vector<Range> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.offset < b.offset; });
  std::vector<Range> out;
  for (const Range& r : ranges) {
    if (!out.empty() && r.offset <= out.back().offset + out.back().bytes) {
      out.back().bytes = std::max(out.back().bytes, r.offset + r.bytes - out.back().offset);
    } else {
      out.push_back(r);
    }
  }
  return out;
}

cudaError_t copy_ranges(const std::vector<Range>& ranges, std::byte* dst, const std::byte* src,
                        cudaStream_t stream) {
  for (const Range& r : merged(ranges)) {
    if (const cudaError_t rc =
            cudaMemcpyAsync(dst + r.offset, src + r.offset, static_cast<std::size_t>(r.bytes),
                            cudaMemcpyDefault, stream)) {
      return rc;
    }
  }
  return cudaSuccess;
}

// The kernels' side of a batch: the copies (pack: user to packed; unpack: the reverse, the packed
// side device-visible) queued as one launch and waited for, the kernel's signal awaited when
// `signal` (it ends the call). `before` and `after` queue the scratch copies around the launch.
template <class Before, class After>
cudaError_t run_batch(const std::vector<BatchCopy>& copies, DeviceContext& ctx,
                      const Policy& policy, bool signal, Before&& before, After&& after) {
  if (copies.empty()) return cudaSuccess;
  Queue q = queue_of(ctx);
  bool signalled = false;
  {
    const runtime::Timed timed(runtime::Phase::BatchQueue);
    const DeviceContext::JobMemory memory = ctx.job_memory(batch_memory_bytes(copies.size()));
    if (memory.host == nullptr) return cudaErrorMemoryAllocation;
    if (!signal) q.done = {};
    if (const cudaError_t rc = before()) return rc;
    if (const cudaError_t rc = enqueue_batch(copies, q, {memory.host, memory.device, memory.bytes},
                                             policy, &signalled)) {
      return rc;
    }
    if (const cudaError_t rc = after()) return rc;
  }
  const runtime::Timed timed(runtime::Phase::BatchWait);
  return wait_for(ctx, q, signalled);
}

BatchSide layout_side(const BatchItem& item) {
  return {item.form, item.extent, item.state, item.count, item.user.device};
}
BatchSide packed_side(const BatchItem& item, std::byte* packed) {
  return {nullptr, 0, nullptr, bytes_of(item), packed + item.packed_offset};
}

// The packed bytes of the items the kernels cannot reach (the host engine's).
std::int64_t host_bytes(Span<const BatchItem> items, int device) {
  std::int64_t bytes = 0;
  for (const BatchItem& item : items) {
    if (!visible_on(item.user, device)) bytes += bytes_of(item);
  }
  return bytes;
}

}  // namespace

Outcome pack_batch(Span<const BatchItem> items, const BufferView& packed, std::int64_t packed_bytes,
                   const Policy& policy, std::string& error) {
  return on_device(device_of(items, packed), error, [&](DeviceContext& ctx) {
    const int device = ctx.device();
    if (!all_reachable(items, device, error)) return Outcome::Fallback;
    const bool direct = visible_on(packed, device);
    std::vector<BatchCopy> copies;
    std::vector<Range> ranges;
    for (const BatchItem& item : items) {
      if (bytes_of(item) > 0 && visible_on(item.user, device)) {
        ranges.push_back({item.packed_offset, bytes_of(item)});
      }
    }
    std::byte* target = packed.device;
    if (!direct && !ranges.empty()) {
      target = static_cast<std::byte*>(ctx.scratch(static_cast<std::size_t>(packed_bytes)));
      if (target == nullptr) {
        error = "no GPU memory for a scratch buffer";
        return Outcome::Fallback;
      }
    }
    for (const BatchItem& item : items) {
      if (bytes_of(item) > 0 && visible_on(item.user, device)) {
        copies.push_back({layout_side(item), packed_side(item, target)});
      }
    }
    const cudaError_t rc = run_batch(
        copies, ctx, policy, direct, [] { return cudaSuccess; },
        [&] {
          return direct ? cudaSuccess : copy_ranges(ranges, packed.host, target, ctx.stream());
        });
    if (rc != cudaSuccess) return outcome_of(rc, "GPU batch pack", error);

    // The host engine's items: straight into a packed buffer the CPU reaches, else staged.
    const std::int64_t staged_bytes = host_bytes(items, device);
    if (staged_bytes == 0) return Outcome::Done;
    const bool host_packed = runtime::host_accessible(packed.info.kind);
    std::vector<std::byte> staged(host_packed ? 0 : static_cast<std::size_t>(staged_bytes));
    std::int64_t at = 0;
    for (const BatchItem& item : items) {
      if (bytes_of(item) == 0 || visible_on(item.user, device)) continue;
      if (host_packed) {
        cpu::pack(*item.form, item.extent, item.count, item.user.host,
                  packed.host + item.packed_offset);
        continue;
      }
      cpu::pack(*item.form, item.extent, item.count, item.user.host, staged.data() + at);
      if (const cudaError_t c = cudaMemcpyAsync(
              packed.host + item.packed_offset, staged.data() + at,
              static_cast<std::size_t>(bytes_of(item)), cudaMemcpyDefault, ctx.stream())) {
        return outcome_of(c, "copying packed bytes", error);
      }
      at += bytes_of(item);
    }
    return host_packed ? Outcome::Done : outcome_of(ctx.wait(), "copying packed bytes", error);
  });
}

Outcome unpack_batch(const BufferView& packed, std::int64_t packed_bytes,
                     Span<const BatchItem> items, const Policy& policy, std::string& error) {
  return on_device(device_of(items, packed), error, [&](DeviceContext& ctx) {
    const int device = ctx.device();
    if (!all_reachable(items, device, error)) return Outcome::Fallback;
    const bool direct = visible_on(packed, device);
    std::vector<BatchCopy> copies;
    std::vector<Range> ranges;
    for (const BatchItem& item : items) {
      if (bytes_of(item) > 0 && visible_on(item.user, device)) {
        ranges.push_back({item.packed_offset, bytes_of(item)});
      }
    }
    std::byte* source = packed.device;
    if (!direct && !ranges.empty()) {
      source = static_cast<std::byte*>(ctx.scratch(static_cast<std::size_t>(packed_bytes)));
      if (source == nullptr) {
        error = "no GPU memory for a scratch buffer";
        return Outcome::Fallback;
      }
    }
    for (const BatchItem& item : items) {
      if (bytes_of(item) > 0 && visible_on(item.user, device)) {
        copies.push_back({packed_side(item, source), layout_side(item)});
      }
    }
    const cudaError_t rc = run_batch(
        copies, ctx, policy, true,
        [&] {
          return direct ? cudaSuccess : copy_ranges(ranges, source, packed.host, ctx.stream());
        },
        [] { return cudaSuccess; });
    if (rc != cudaSuccess) return outcome_of(rc, "GPU batch unpack", error);

    // The host engine's items: straight from a packed buffer the CPU reaches, else staged.
    const std::int64_t staged_bytes = host_bytes(items, device);
    if (staged_bytes == 0) return Outcome::Done;
    const bool host_packed = runtime::host_accessible(packed.info.kind);
    std::vector<std::byte> staged(host_packed ? 0 : static_cast<std::size_t>(staged_bytes));
    if (!host_packed) {
      std::int64_t at = 0;
      for (const BatchItem& item : items) {
        if (bytes_of(item) == 0 || visible_on(item.user, device)) continue;
        if (const cudaError_t c = cudaMemcpyAsync(
                staged.data() + at, packed.host + item.packed_offset,
                static_cast<std::size_t>(bytes_of(item)), cudaMemcpyDefault, ctx.stream())) {
          return outcome_of(c, "copying packed bytes", error);
        }
        at += bytes_of(item);
      }
      if (const cudaError_t c = ctx.wait()) return outcome_of(c, "copying packed bytes", error);
    }
    std::int64_t at = 0;
    for (const BatchItem& item : items) {
      if (bytes_of(item) == 0 || visible_on(item.user, device)) continue;
      const std::byte* from = host_packed ? packed.host + item.packed_offset : staged.data() + at;
      cpu::unpack(*item.form, item.extent, item.count, from, item.user.host);
      if (!host_packed) at += bytes_of(item);
    }
    return Outcome::Done;
  });
}

Outcome copy_batch(Span<const BatchCopy> copies, int device, const Policy& policy,
                   std::string& error) {
  return on_device(device, error, [&](DeviceContext& ctx) {
    const std::vector<BatchCopy> all(copies.begin(), copies.end());
    const cudaError_t rc = run_batch(
        all, ctx, policy, true, [] { return cudaSuccess; }, [] { return cudaSuccess; });
    return outcome_of(rc, "GPU batch copy", error);
  });
}

Outcome settle_default_stream(int device, std::string& error) {
  return on_device(device, error, [&](DeviceContext& ctx) {
    return outcome_of(ctx.wait(), "waiting for the default stream", error);
  });
}

bool default_stream_idle(int device) {
  runtime::DeviceGuard guard(device);
  return guard.ok() && runtime::query_stream(cudaStreamLegacy) == cudaSuccess;
}

Outcome copy_layout(const Layout& from, std::int64_t count_from, const BufferView& from_view,
                    const Layout& to, std::int64_t count_to, const BufferView& to_view,
                    const Policy& policy, std::string& error) {
  if (count_from * from.form.size != count_to * to.form.size) {
    error = "copy_layout: the two sides hold different packed bytes";
    return Outcome::Failed;
  }
  return on_device(device_for(to_view, from_view), error, [&](DeviceContext& ctx) {
    const int device = ctx.device();
    // Another GPU's memory is read over peer access where the devices allow it.
    bool reachable = visible_on(from_view, device);
    if (!reachable && from_view.info.kind == runtime::MemoryKind::Device) {
      int can = 0;
      if (cudaDeviceCanAccessPeer(&can, device, from_view.info.device) == cudaSuccess && can) {
        const cudaError_t rc = cudaDeviceEnablePeerAccess(from_view.info.device, 0);
        reachable = rc == cudaSuccess || rc == cudaErrorPeerAccessAlreadyEnabled;
      }
      (void)cudaGetLastError();
    }
    if (!reachable || !visible_on(to_view, device)) {
      error = "copy_layout: a side the GPU's kernels cannot reach";
      return Outcome::Fallback;
    }
    const std::vector<BatchCopy> copies{
        {{&from.form, from.extent, &from.state, count_from, from_view.device},
         {&to.form, to.extent, &to.state, count_to, to_view.device}}};
    const cudaError_t rc = run_batch(
        copies, ctx, policy, true, [] { return cudaSuccess; }, [] { return cudaSuccess; });
    return outcome_of(rc, "GPU layout copy", error);
  });
}

}  // namespace strider::engine::cuda
