#include "gpu_memory.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

namespace strider::testing {

const char* name(Kind k) {
  switch (k) {
    case Kind::Device:
      return "device";
    case Kind::Managed:
      return "managed";
    case Kind::Pinned:
      return "pinned";
    case Kind::Pageable:
      return "pageable";
  }
  return "?";
}

Pool::Pool(Kind kind, std::size_t bytes) : kind_(kind), bytes_(bytes) {
  void* p = nullptr;
  cudaError_t rc = cudaSuccess;
  switch (kind) {
    case Kind::Device:
      rc = cudaMalloc(&p, bytes);
      break;
    case Kind::Managed:
      rc = cudaMallocManaged(&p, bytes);
      break;
    case Kind::Pinned:
      rc = cudaMallocHost(&p, bytes);
      break;
    case Kind::Pageable:
      p = std::malloc(bytes);
      break;
  }
  if (rc != cudaSuccess || p == nullptr) {
    ADD_FAILURE() << "allocating " << bytes << " bytes of " << name(kind)
                  << " memory: " << cudaGetErrorString(rc);
  }
  base_ = static_cast<std::byte*>(p);
}

Pool::~Pool() {
  switch (kind_) {
    case Kind::Device:
    case Kind::Managed:
      cudaFree(base_);
      break;
    case Kind::Pinned:
      cudaFreeHost(base_);
      break;
    case Kind::Pageable:
      std::free(base_);
      break;
  }
}

void copy_bytes(void* dst, const void* src, std::size_t n) {
  const cudaError_t rc = cudaMemcpy(dst, src, n, cudaMemcpyDefault);
  ASSERT_EQ(rc, cudaSuccess) << cudaGetErrorString(rc);
}

std::vector<unsigned char> read_back(const void* src, std::size_t n) {
  std::vector<unsigned char> out(n);
  copy_bytes(out.data(), src, n);
  return out;
}

void fill_random(void* dst, std::size_t n, std::mt19937_64& rng) {
  std::vector<unsigned char> bytes(n);
  for (auto& b : bytes) b = static_cast<unsigned char>(rng());
  copy_bytes(dst, bytes.data(), n);
}

}  // namespace strider::testing
