// Where the point-to-point test keeps its user buffers. The same test source (p2p_test.cpp) is
// built twice: over host memory (p2p_buffers.cpp, here) and over GPU memory
// (tests/gpu/gpu_p2p_buffers.cpp, compiled with STRIDER_P2P_TEST_GPU). The test prepares every
// buffer on the host, uploads it into the placement's memory, hands that memory to MPI, and
// downloads it again to check it.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace strider::testing {

class Placement {
 public:
  virtual ~Placement() = default;
  virtual const char* name() const = 0;
  virtual void* alloc(std::size_t bytes) = 0;  // never null, also for 0 bytes
  virtual void free(void* p) = 0;
  virtual void upload(void* dst, const void* host_src, std::size_t n) = 0;
  virtual void download(void* host_dst, const void* src, std::size_t n) = 0;
};

enum class Role { kSend, kRecv };

// This rank's memory for buffers of `role`. Host build: host memory. GPU build
// (STRIDER_TEST_PLACEMENT): "device" device memory on every rank, "mixed" device memory on even
// ranks and host memory on odd ranks, so that each message goes device to host or host to
// device. Call after MPI_Init.
Placement& placement(Role role);
// One line saying what placement() gives on this rank, for the log.
const char* placement_summary();
// Ordinary host memory (malloc), which both builds use (host_placement.cpp).
Placement& host_placement();
// GPU build only: whether every rank of MPI_COMM_WORLD runs on one GPU (collective), the
// placement where same-node moves in place are allowed whatever the blocks.
bool all_ranks_on_one_gpu();

// A buffer in a placement, initialized from host bytes; `offset` is the index of the datatype's
// origin in those bytes (see ElementBuffer in mpi_test_support.hpp).
class PlacedBuffer {
 public:
  PlacedBuffer(Placement& where, const std::vector<unsigned char>& host, std::ptrdiff_t offset)
      : where_(&where), bytes_(host.size()), offset_(offset) {
    base_ = where.alloc(bytes_);
    if (bytes_) where.upload(base_, host.data(), bytes_);
  }
  PlacedBuffer(PlacedBuffer&& o) noexcept
      : where_(o.where_),
        base_(std::exchange(o.base_, nullptr)),
        bytes_(o.bytes_),
        offset_(o.offset_) {}
  PlacedBuffer(const PlacedBuffer&) = delete;
  PlacedBuffer& operator=(const PlacedBuffer&) = delete;
  PlacedBuffer& operator=(PlacedBuffer&&) = delete;
  ~PlacedBuffer() {
    if (base_) where_->free(base_);
  }

  // The address to give MPI: the datatype's origin.
  void* origin() const { return static_cast<unsigned char*>(base_) + offset_; }
  std::vector<unsigned char> read() const {
    std::vector<unsigned char> out(bytes_);
    if (bytes_) where_->download(out.data(), base_, bytes_);
    return out;
  }
  void write(const std::vector<unsigned char>& host) {
    if (bytes_) where_->upload(base_, host.data(), bytes_);
  }
  const char* placement_name() const { return where_->name(); }

 private:
  Placement* where_;
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  std::ptrdiff_t offset_ = 0;
};

}  // namespace strider::testing
