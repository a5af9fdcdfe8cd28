// The stream-ordered engine: the kernels (or one copy) between two device-visible buffers, and
// the pack/unpack orchestration around a packed buffer the kernels cannot see.
#include <cuda_runtime.h>

#include <vector>

#include "engine/cuda/device_tables.hpp"
#include "engine/cuda/enqueue.hpp"

namespace strider::engine::cuda {

cudaError_t list_table_on(const canon::CanonicalForm& form, const TypeState& state,
                          const Queue& queue, int word, bool wide, const void** out) {
  if (void* t = state.find(queue.device, word, wide)) {
    *out = t;
    return cudaSuccess;
  }
  const std::vector<std::byte> host =
      wide ? list_table<Divmod64>(form, word) : list_table<FastDivmod32>(form, word);
  void* table = nullptr;
  cudaError_t rc = cudaMalloc(&table, host.size());
  // Pageable source: the copy has consumed `host` when it returns.
  if (rc == cudaSuccess) {
    rc = cudaMemcpyAsync(table, host.data(), host.size(), cudaMemcpyHostToDevice, queue.stream);
  }
  if (rc != cudaSuccess) {
    if (table) cudaFree(table);
    return rc;
  }
  *out = state.add(TypeState::Table{queue.device, word, wide, table});
  return cudaSuccess;
}

bool visible_on(const runtime::BufferView& b, int device) {
  if (b.info.kind == runtime::MemoryKind::Device && b.info.device != device) return false;
  return b.device_visible;
}

cudaError_t enqueue_transfer(const Layout& layout, std::int64_t count, std::byte* user,
                             std::byte* packed, Direction direction, const Queue& queue,
                             const Policy& policy, bool* signalled) {
  if (signalled) *signalled = false;
  const auto user_addr = reinterpret_cast<std::uintptr_t>(user);
  const auto packed_addr = reinterpret_cast<std::uintptr_t>(packed);
  if (auto shape = strided_shape(layout.form, layout.extent, count, user_addr, packed_addr,
                                 policy.max_word)) {
    if (shape->block.dims.empty() &&
        (queue.done.flag == nullptr || shape->block.block > Policy::kSignalledCopyMaxBytes)) {
      std::byte* object = user + shape->block.offset;
      const auto bytes = static_cast<std::size_t>(shape->block.block);
      return direction == Direction::Pack
                 ? cudaMemcpyAsync(packed, object, bytes, cudaMemcpyDefault, queue.stream)
                 : cudaMemcpyAsync(object, packed, bytes, cudaMemcpyDefault, queue.stream);
    }
    if (signalled) *signalled = queue.done.flag != nullptr;
    return launch_strided(*shape, !fits_32bit(*shape), user, packed, direction, queue.stream,
                          queue.multiprocessors, queue.done);
  }
  auto list =
      list_shape(layout.form, layout.extent, count, user_addr, packed_addr, policy.max_word);
  if (!list) return cudaErrorNotSupported;
  const bool wide = !fits_32bit(layout.form, *list);
  const void* table = nullptr;
  if (const cudaError_t rc =
          list_table_on(layout.form, layout.state, queue, list->word, wide, &table))
    return rc;
  if (signalled) *signalled = queue.done.flag != nullptr;
  return launch_list(*list, table, static_cast<int>(layout.form.pieces.size()), wide, user, packed,
                     direction, queue.stream, queue.multiprocessors, ListKernel::Auto, queue.done);
}

cudaError_t pack_async(const Layout& layout, std::int64_t count, const runtime::BufferView& user,
                       const runtime::BufferView& packed, const Queue& queue, Scratch scratch,
                       const Policy& policy, bool* signalled) {
  if (visible_on(packed, queue.device)) {
    return enqueue_transfer(layout, count, user.device, packed.device, Direction::Pack, queue,
                            policy, signalled);
  }
  if (signalled) *signalled = false;
  const auto bytes = static_cast<std::size_t>(count * layout.form.size);
  if (scratch.bytes < bytes) return cudaErrorInvalidValue;
  Queue unsignalled = queue;  // the copy after the kernel is the call's last operation
  unsignalled.done = {};
  if (const cudaError_t rc = enqueue_transfer(layout, count, user.device, scratch.data,
                                              Direction::Pack, unsignalled, policy)) {
    return rc;
  }
  return cudaMemcpyAsync(packed.host, scratch.data, bytes, cudaMemcpyDefault, queue.stream);
}

cudaError_t unpack_async(const Layout& layout, std::int64_t count,
                         const runtime::BufferView& packed, const runtime::BufferView& user,
                         const Queue& queue, Scratch scratch, const Policy& policy,
                         bool* signalled) {
  if (visible_on(packed, queue.device)) {
    return enqueue_transfer(layout, count, user.device, packed.device, Direction::Unpack, queue,
                            policy, signalled);
  }
  const auto bytes = static_cast<std::size_t>(count * layout.form.size);
  if (scratch.bytes < bytes) return cudaErrorInvalidValue;
  if (const cudaError_t rc =
          cudaMemcpyAsync(scratch.data, packed.host, bytes, cudaMemcpyDefault, queue.stream)) {
    return rc;
  }
  return enqueue_transfer(layout, count, user.device, scratch.data, Direction::Unpack, queue,
                          policy, signalled);
}

}  // namespace strider::engine::cuda
