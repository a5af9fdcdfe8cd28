// Chooses, per call, how the bytes move between the user buffer and the packed buffer given
// their memory kinds, and runs the kernels on the GPU that holds the data:
//   both device-visible (device, managed, mapped pinned host): one kernel (into pinned host
//     memory that is the one-shot pack);
//   user on the GPU, packed in pageable host memory: kernel into scratch, then one copy;
//   user in pageable host memory, packed on the GPU: host engine, then one copy.
// Contiguous objects are a single cudaMemcpyAsync.
#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "engine/cpu/pack.hpp"
#include "engine/cuda/gpu_engine.hpp"
#include "engine/cuda/launch.hpp"
#include "runtime/config.hpp"
#include "runtime/device_context.hpp"

namespace strider::engine::cuda {
namespace {

using runtime::BufferView;
using runtime::DeviceContext;
using runtime::DeviceGuard;

// A block list's piece tables on the devices, one per (device, word size, index width).
struct ListTables {
  struct Entry {
    int device;
    int word;
    bool wide;
    void* table;
  };
  std::vector<Entry> entries;
  ~ListTables() {
    for (const Entry& e : entries) {
      DeviceGuard guard(e.device);
      cudaFree(e.table);
    }
  }
};

// The device table for this call, uploaded on first use and kept with the plan.
const void* device_list_table(const plan::Plan& plan, int device, int word, bool wide,
                              std::string& error) {
  std::lock_guard lock(plan.gpu.mutex);
  auto tables = std::static_pointer_cast<ListTables>(plan.gpu.state);
  if (!tables) {
    tables = std::make_shared<ListTables>();
    plan.gpu.state = tables;
  }
  for (const auto& e : tables->entries) {
    if (e.device == device && e.word == word && e.wide == wide) return e.table;
  }
  const std::vector<std::byte> host =
      wide ? list_table<Divmod64>(plan.form, word) : list_table<FastDivmod32>(plan.form, word);
  void* table = nullptr;
  cudaError_t rc = cudaMalloc(&table, host.size());
  if (rc == cudaSuccess) rc = cudaMemcpy(table, host.data(), host.size(), cudaMemcpyHostToDevice);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    if (table) cudaFree(table);
    error = runtime::cuda_error_text("uploading a block list", rc);
    return nullptr;
  }
  tables->entries.push_back({device, word, wide, table});
  return table;
}

// Queues the kernels (or copy) moving count elements between two device-visible buffers.
// Returns false with `error` set; `fallback` tells whether that was a lack of memory.
bool queue_transfer(const plan::Plan& plan, std::int64_t count, std::byte* user, std::byte* packed,
                    Direction direction, DeviceContext& ctx, std::string& error, bool& fallback) {
  const auto& form = plan.form;
  const std::int64_t extent = plan.bounds.extent;
  const auto user_addr = reinterpret_cast<std::uintptr_t>(user);
  const auto packed_addr = reinterpret_cast<std::uintptr_t>(packed);
  cudaError_t rc;
  const int max_word = runtime::config().gpu_max_word;
  if (auto shape = strided_shape(form, extent, count, user_addr, packed_addr, max_word)) {
    if (shape->block.dims.empty()) {
      std::byte* object = user + shape->block.offset;
      const auto bytes = static_cast<std::size_t>(shape->block.block);
      rc = direction == Direction::Pack
               ? cudaMemcpyAsync(packed, object, bytes, cudaMemcpyDefault, ctx.stream())
               : cudaMemcpyAsync(object, packed, bytes, cudaMemcpyDefault, ctx.stream());
    } else {
      rc = launch_strided(*shape, !fits_32bit(*shape), user, packed, direction, ctx.stream(),
                          ctx.multiprocessors());
    }
  } else {
    auto list = list_shape(form, extent, count, user_addr, packed_addr, max_word);
    if (!list) {
      error = "the type has more dims than a launch holds";
      fallback = true;
      return false;
    }
    const bool wide = !fits_32bit(form, *list);
    const void* table = device_list_table(plan, ctx.device(), list->word, wide, error);
    if (!table) {
      fallback = true;
      return false;
    }
    rc = launch_list(*list, table, static_cast<int>(form.pieces.size()), wide, user, packed,
                     direction, ctx.stream(), ctx.multiprocessors());
  }
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    error = runtime::cuda_error_text("pack kernel launch", rc);
    return false;
  }
  return true;
}

// The GPU whose stream runs the call: the one holding the user buffer, else the packed one.
int device_for(const BufferView& user, const BufferView& packed) {
  if (runtime::gpu_resident(user.info.kind) && user.info.device >= 0) return user.info.device;
  if (runtime::gpu_resident(packed.info.kind) && packed.info.device >= 0) {
    return packed.info.device;
  }
  int current = 0;
  return cudaGetDevice(&current) == cudaSuccess ? current : 0;
}

// Whether this GPU's kernels reach the buffer (device memory of another GPU is reached by
// copies instead).
bool visible_on(const BufferView& b, int device) {
  if (b.info.kind == runtime::MemoryKind::Device && b.info.device != device) return false;
  return b.device_visible;
}

Outcome finish(DeviceContext& ctx, std::string& error) {
  const cudaError_t rc = cudaStreamSynchronize(ctx.stream());
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    error = runtime::cuda_error_text("cudaStreamSynchronize", rc);
    return Outcome::Failed;
  }
  return Outcome::Done;
}

// The packed buffer as this GPU's kernels see it: itself, or the context's scratch buffer
// (null when there is no memory for one).
std::byte* device_side(const BufferView& packed, bool visible, DeviceContext& ctx,
                       std::size_t bytes) {
  return visible ? packed.device : static_cast<std::byte*>(ctx.scratch(bytes));
}

// An object this GPU's kernels cannot reach is the host engine's, if the CPU may touch it.
bool host_engine_may_touch(const BufferView& user, std::string& error) {
  if (runtime::host_accessible(user.info.kind)) return true;
  error = "the object's memory could not be classified";
  return false;
}

Outcome failed_copy(cudaError_t rc, std::string& error) {
  (void)cudaGetLastError();
  error = runtime::cuda_error_text("cudaMemcpyAsync", rc);
  return Outcome::Failed;
}

// Runs `body(ctx, device)` on the right GPU with its context locked.
template <class Body>
Outcome on_device(const BufferView& user, const BufferView& packed, std::string& error,
                  Body&& body) {
  const int device = device_for(user, packed);
  DeviceGuard guard(device);
  if (!guard.ok()) {
    error = "cannot select GPU " + std::to_string(device);
    return Outcome::Failed;
  }
  DeviceContext* ctx = DeviceContext::get(device, error);
  if (!ctx) return Outcome::Failed;
  std::lock_guard lock(ctx->mutex());
  return body(*ctx, device);
}

}  // namespace

Outcome pack(const plan::Plan& plan, std::int64_t count, const BufferView& user,
             const BufferView& packed, std::string& error) {
  const auto bytes = static_cast<std::size_t>(count * plan.bounds.size);
  return on_device(user, packed, error, [&](DeviceContext& ctx, int device) {
    const bool user_visible = visible_on(user, device);
    const bool packed_visible = visible_on(packed, device);
    bool fallback = false;
    if (!user_visible) {
      if (!host_engine_may_touch(user, error)) return Outcome::Failed;
      // A host object for a device packed buffer: pack on the host, then one copy.
      std::vector<std::byte> staged(bytes);
      cpu::pack(plan.form, plan.bounds.extent, count, user.host, staged.data());
      const cudaError_t rc =
          cudaMemcpyAsync(packed.host, staged.data(), bytes, cudaMemcpyDefault, ctx.stream());
      if (rc != cudaSuccess) return failed_copy(rc, error);
      return finish(ctx, error);
    }
    std::byte* target = device_side(packed, packed_visible, ctx, bytes);
    if (target == nullptr) {
      error = "no GPU memory for a scratch buffer";
      return Outcome::Fallback;
    }
    if (!queue_transfer(plan, count, user.device, target, Direction::Pack, ctx, error, fallback)) {
      return fallback ? Outcome::Fallback : Outcome::Failed;
    }
    if (!packed_visible) {
      const cudaError_t rc =
          cudaMemcpyAsync(packed.host, target, bytes, cudaMemcpyDefault, ctx.stream());
      if (rc != cudaSuccess) return failed_copy(rc, error);
    }
    return finish(ctx, error);
  });
}

Outcome unpack(const plan::Plan& plan, std::int64_t count, const BufferView& packed,
               const BufferView& user, std::string& error) {
  const auto bytes = static_cast<std::size_t>(count * plan.bounds.size);
  return on_device(user, packed, error, [&](DeviceContext& ctx, int device) {
    const bool user_visible = visible_on(user, device);
    const bool packed_visible = visible_on(packed, device);
    bool fallback = false;
    if (!user_visible) {
      if (!host_engine_may_touch(user, error)) return Outcome::Failed;
      // A device packed buffer for a host object: one copy, then unpack on the host.
      std::vector<std::byte> staged(bytes);
      cudaError_t rc =
          cudaMemcpyAsync(staged.data(), packed.host, bytes, cudaMemcpyDefault, ctx.stream());
      if (rc != cudaSuccess) return failed_copy(rc, error);
      if (finish(ctx, error) != Outcome::Done) return Outcome::Failed;
      cpu::unpack(plan.form, plan.bounds.extent, count, staged.data(), user.host);
      return Outcome::Done;
    }
    std::byte* source = device_side(packed, packed_visible, ctx, bytes);
    if (source == nullptr) {
      error = "no GPU memory for a scratch buffer";
      return Outcome::Fallback;
    }
    if (!packed_visible) {
      const cudaError_t rc =
          cudaMemcpyAsync(source, packed.host, bytes, cudaMemcpyDefault, ctx.stream());
      if (rc != cudaSuccess) return failed_copy(rc, error);
    }
    if (!queue_transfer(plan, count, user.device, source, Direction::Unpack, ctx, error,
                        fallback)) {
      return fallback ? Outcome::Fallback : Outcome::Failed;
    }
    return finish(ctx, error);
  });
}

bool copy(void* dst, const void* src, std::size_t bytes, std::string& error) {
  const cudaError_t rc = cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    error = runtime::cuda_error_text("cudaMemcpy", rc);
    return false;
  }
  return true;
}

bool available() { return true; }

}  // namespace strider::engine::cuda
