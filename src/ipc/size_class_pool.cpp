#include "ipc/size_class_pool.hpp"

#include <bit>
#include <cstdint>

namespace strider::ipc {

SizeClassPool::SizeClassPool(Allocator allocator, std::size_t bound)
    : allocator_(std::move(allocator)), bound_(bound), free_(64) {}

SizeClassPool::~SizeClassPool() { trim(); }

std::size_t SizeClassPool::class_size(std::size_t bytes) {
  if (bytes <= kSmallestClass) return kSmallestClass;
  if (bytes > (std::size_t{1} << 62)) return 0;  // no such class: the caller's allocation fails
  return std::bit_ceil(bytes);
}

int SizeClassPool::class_index(std::size_t class_bytes) { return std::countr_zero(class_bytes); }

Block SizeClassPool::acquire(std::size_t bytes) {
  const std::size_t size = class_size(bytes);
  if (size == 0) return {};
  std::lock_guard lock(mutex_);
  auto& list = free_[class_index(size)];
  if (!list.empty()) {
    Block b{list.back(), size, true};
    list.pop_back();
    return b;
  }
  // A new buffer: within the bound it is cached; past it, first make room by freeing cached
  // buffers of other classes, and if that is not enough lend one that is freed on return.
  if (held_ + size > bound_) trim_locked(held_ + size - bound_);
  const bool cached = held_ + size <= bound_;
  void* p = allocator_.allocate(size);
  ++allocations_;
  if (p == nullptr) {
    trim_locked(SIZE_MAX);  // out of memory: give what is cached back and try once more
    p = allocator_.allocate(size);
    ++allocations_;
    if (p == nullptr) return {};
  }
  if (cached) held_ += size;
  return {static_cast<std::byte*>(p), size, cached};
}

void SizeClassPool::give_back(const Block& block) {
  if (!block) return;
  std::lock_guard lock(mutex_);
  if (!block.cached) {
    allocator_.release(block.data);
    return;
  }
  free_[class_index(block.capacity)].push_back(block.data);
}

void SizeClassPool::trim() {
  std::lock_guard lock(mutex_);
  trim_locked(SIZE_MAX);
}

void SizeClassPool::trim_locked(std::size_t bytes) {
  // Largest classes first: the fewest frees (each may synchronize the device) for the room.
  std::size_t freed = 0;
  for (std::size_t i = free_.size(); i-- > 0 && freed < bytes;) {
    while (!free_[i].empty() && freed < bytes) {
      allocator_.release(free_[i].back());
      free_[i].pop_back();
      held_ -= std::size_t{1} << i;
      freed += std::size_t{1} << i;
    }
  }
}

std::size_t SizeClassPool::held() const {
  std::lock_guard lock(mutex_);
  return held_;
}

std::uint64_t SizeClassPool::allocations() const {
  std::lock_guard lock(mutex_);
  return allocations_;
}

}  // namespace strider::ipc
