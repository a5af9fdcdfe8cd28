// Buffers of every memory kind for the GPU tests: one pool per kind, carved per use, with a
// chosen misalignment of the base address.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace strider::testing {

enum class Kind { Device, Managed, Pinned, Pageable };
const char* name(Kind k);
constexpr Kind kAllKinds[] = {Kind::Device, Kind::Managed, Kind::Pinned, Kind::Pageable};

class Pool {
 public:
  Pool(Kind kind, std::size_t bytes);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  Kind kind() const { return kind_; }
  std::size_t capacity() const { return bytes_; }
  std::byte* base() const { return base_; }

 private:
  Kind kind_;
  std::size_t bytes_;
  std::byte* base_ = nullptr;
};

// Copies between any memories (synchronous); fails the test on a CUDA error.
void copy_bytes(void* dst, const void* src, std::size_t n);
std::vector<unsigned char> read_back(const void* src, std::size_t n);
void fill_random(void* dst, std::size_t n, std::mt19937_64& rng);

}  // namespace strider::testing
