// A cache of buffers in power-of-two size classes, so that after warm-up a transfer takes its
// wire buffer from a free list instead of calling cudaHostAlloc/cudaMalloc (each costs tens of
// microseconds to milliseconds and synchronizes the device). Pure logic over an injected
// allocator: the same class serves pinned host, device and plain host memory, and is unit-tested
// with a fake one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace strider::ipc {

struct Allocator {
  std::function<void*(std::size_t)> allocate;  // nullptr when out of memory
  std::function<void(void*)> release;
};

// A buffer lent by a pool: give it back to the pool it came from.
struct Block {
  std::byte* data = nullptr;
  std::size_t capacity = 0;
  bool cached = false;  // returns to a free list (false: over the bound, freed when given back)
  explicit operator bool() const { return data != nullptr; }
};

class SizeClassPool {
 public:
  static constexpr std::size_t kSmallestClass = 4096;

  // The pool holds at most `bound` bytes, lent and cached together; a request beyond that is
  // still served, by a buffer freed when it comes back.
  SizeClassPool(Allocator allocator, std::size_t bound);
  ~SizeClassPool();  // frees the cached buffers (lent ones are the borrowers')
  SizeClassPool(const SizeClassPool&) = delete;
  SizeClassPool& operator=(const SizeClassPool&) = delete;

  // A buffer of at least `bytes`; empty when the allocator fails.
  Block acquire(std::size_t bytes);
  void give_back(const Block& block);
  // Frees every cached buffer (MPI_Finalize, or before growing past the bound).
  void trim();

  std::size_t held() const;           // bytes lent + cached that count against the bound
  std::uint64_t allocations() const;  // allocator calls so far

  // The size class of a request: the smallest power of two >= bytes, at least kSmallestClass.
  static std::size_t class_size(std::size_t bytes);

 private:
  void trim_locked(std::size_t bytes);  // frees cached buffers worth at least `bytes`, or all
  static int class_index(std::size_t class_bytes);

  Allocator allocator_;
  std::size_t bound_;
  mutable std::mutex mutex_;
  std::vector<std::vector<std::byte*>> free_;  // per class index
  std::size_t held_ = 0;
  std::uint64_t allocations_ = 0;
};

}  // namespace strider::ipc
