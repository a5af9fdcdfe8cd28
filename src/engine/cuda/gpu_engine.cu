// The synchronous engine over the stream-ordered one. Chooses, per call, how the bytes move
// between the user buffer and the packed buffer given their memory kinds, on the GPU that holds
// the data, with that GPU's stream and scratch (runtime::DeviceContext):
//   user buffer visible to the kernels: pack_async / unpack_async (directly, or through scratch
//     and one copy when the packed buffer is pageable host memory or another GPU's);
//   user buffer in host memory, packed on the GPU: the host engine, then one copy.
// Then it waits: on the kernel's own completion signal where the kernel ends the call, else on an
// event (bench/call_cost measured both against the stream and device synchronizations).
#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <vector>

#include "engine/cpu/pack.hpp"
#include "engine/cuda/enqueue.hpp"
#include "engine/cuda/gpu_engine.hpp"
#include "engine/cuda/sync_call.hpp"

namespace strider::engine::cuda {
namespace {

// The scratch the call needs (none when the packed buffer is visible); false when the device
// has no memory for it.
bool scratch_for(const BufferView& packed, std::int64_t bytes, DeviceContext& ctx,
                 Scratch& scratch) {
  if (visible_on(packed, ctx.device())) return true;
  scratch.bytes = static_cast<std::size_t>(bytes);
  scratch.data = static_cast<std::byte*>(ctx.scratch(scratch.bytes));
  return scratch.data != nullptr;
}

}  // namespace

void release_table(const TypeState::Table& table) {
  DeviceGuard guard(table.device);
  cudaFree(table.data);
}

Outcome pack(const Layout& layout, std::int64_t count, const BufferView& user,
             const BufferView& packed, const Policy& policy, std::string& error) {
  const std::int64_t bytes = count * layout.form.size;
  return on_device(device_for(user, packed), error, [&](DeviceContext& ctx) {
    if (!visible_on(user, ctx.device())) {
      if (!host_engine_may_touch(user, error)) return Outcome::Failed;
      // A host object for a device packed buffer: pack on the host, then one copy.
      std::vector<std::byte> staged(static_cast<std::size_t>(bytes));
      cpu::pack(layout.form, layout.extent, count, user.host, staged.data());
      cudaError_t rc = cudaMemcpyAsync(packed.host, staged.data(), staged.size(), cudaMemcpyDefault,
                                       ctx.stream());
      if (rc == cudaSuccess) rc = ctx.wait();
      return outcome_of(rc, "copying packed bytes", error);
    }
    Scratch scratch;
    if (!scratch_for(packed, bytes, ctx, scratch)) {
      error = "no GPU memory for a scratch buffer";
      return Outcome::Fallback;
    }
    const Queue q = queue_of(ctx);
    bool signalled = false;
    cudaError_t rc = pack_async(layout, count, user, packed, q, scratch, policy, &signalled);
    if (rc == cudaSuccess) rc = wait_for(ctx, q, signalled);
    return outcome_of(rc, "GPU pack", error);
  });
}

Outcome unpack(const Layout& layout, std::int64_t count, const BufferView& packed,
               const BufferView& user, const Policy& policy, std::string& error) {
  const std::int64_t bytes = count * layout.form.size;
  return on_device(device_for(user, packed), error, [&](DeviceContext& ctx) {
    if (!visible_on(user, ctx.device())) {
      if (!host_engine_may_touch(user, error)) return Outcome::Failed;
      // A device packed buffer for a host object: one copy, then unpack on the host.
      std::vector<std::byte> staged(static_cast<std::size_t>(bytes));
      cudaError_t rc = cudaMemcpyAsync(staged.data(), packed.host, staged.size(), cudaMemcpyDefault,
                                       ctx.stream());
      if (rc == cudaSuccess) rc = ctx.wait();
      if (rc != cudaSuccess) return outcome_of(rc, "copying packed bytes", error);
      cpu::unpack(layout.form, layout.extent, count, staged.data(), user.host);
      return Outcome::Done;
    }
    Scratch scratch;
    if (!scratch_for(packed, bytes, ctx, scratch)) {
      error = "no GPU memory for a scratch buffer";
      return Outcome::Fallback;
    }
    const Queue q = queue_of(ctx);
    bool signalled = false;
    cudaError_t rc = unpack_async(layout, count, packed, user, q, scratch, policy, &signalled);
    if (rc == cudaSuccess) rc = wait_for(ctx, q, signalled);
    return outcome_of(rc, "GPU unpack", error);
  });
}

bool copy(void* dst, const void* src, std::size_t bytes, std::string& error) {
  cudaError_t rc = cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
  // cudaMemcpy may return before a device-to-device copy is done: the MPI may read `dst` next.
  if (rc == cudaSuccess) rc = cudaStreamSynchronize(nullptr);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();
    error = runtime::cuda_error_text("cudaMemcpy", rc);
    return false;
  }
  return true;
}

bool available() { return true; }

int device_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();
      n = 0;
    }
    return n;
  }();
  return count;
}

int current_device() {
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return device;
}

bool set_current_device(int device) {
  if (cudaSetDevice(device) == cudaSuccess) return true;
  (void)cudaGetLastError();
  return false;
}

std::uint64_t device_fingerprint(int device) {
  // Asked for every same-node offer made and taken; a UUID never changes, and
  // cudaGetDeviceProperties fills the whole property struct: computed once per ordinal.
  constexpr int kRemembered = 64;
  static std::array<std::atomic<std::uint64_t>, kRemembered> known{};
  const bool remembered = device >= 0 && device < kRemembered;
  if (remembered) {
    if (const std::uint64_t f = known[device].load(std::memory_order_relaxed)) return f;
  }
  cudaDeviceProp prop{};
  if (device < 0 || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  // FNV-1a over the UUID: equal across processes exactly for the same physical GPU.
  std::uint64_t h = 1469598103934665603ull;
  for (char c : prop.uuid.bytes) {
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  }
  h = h == 0 ? 1 : h;
  if (remembered) known[device].store(h, std::memory_order_relaxed);
  return h;
}

}  // namespace strider::engine::cuda
