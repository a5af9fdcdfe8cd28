// The peers' wires a process has mapped: found by (GPU, handle), pinned while a call reads them,
// and the unpinned ones closed, oldest first, past a count and a byte bound (a wire over its
// pool's bound is freed after each call, each time leaving a stale mapping that holds the
// exporter's memory until closed; a new allocation of the same range then clashes with it, and
// the unpinned ones on that GPU are closed before one more try). Pure logic over an injected
// mapper: CUDA IPC in wire_ipc.cu, a fake in the unit test. Thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "ipc/wire_ipc.hpp"

namespace strider::ipc {

class WireImports {
 public:
  struct Mapper {
    // Maps `handle` for kernels on `device`; null with `error` on failure, and `clash` set when
    // the driver found the range already mapped: an exporter freed an allocation this process
    // still maps, and its range came back in a new allocation (CUDA IPC maps at the exporter's
    // addresses). `own` set where the handle exports this process's own allocation, used as it
    // is: such a mapping is never closed.
    std::function<std::byte*(const WireHandle& handle, int device, std::string& error, bool& clash,
                             bool& own)>
        open;
    std::function<void(std::byte* mapped, int device)> close;
  };

  WireImports(Mapper mapper, std::size_t max_mappings, std::size_t max_bytes);
  WireImports(const WireImports&) = delete;
  WireImports& operator=(const WireImports&) = delete;

  // The mapping of `handle` (a wire of `bytes`) on `device`, opened on first use, and pinned.
  std::byte* pin(const WireHandle& handle, std::size_t bytes, int device, std::string& error);
  // One pin of `mapped` fewer; the bounds are applied again.
  void unpin(const std::byte* mapped);
  // Closes every mapping, pinned or not (MPI_Finalize).
  void close_all();

  std::size_t mappings() const;
  std::size_t bytes() const;

 private:
  struct Mapping {
    WireHandle handle;
    int device = -1;
    std::byte* mapped = nullptr;
    std::size_t bytes = 0;
    int pins = 0;
    bool own = false;  // this process's own allocation: nothing to close
  };
  struct Key {
    int device;
    WireHandle handle;
    bool operator==(const Key& other) const {
      return device == other.device && handle.bytes == other.handle.bytes;
    }
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const;
  };
  void close(std::list<Mapping>::iterator it);
  void trim();  // closes unpinned mappings, oldest first, until both bounds hold
  void close_unpinned(int device);  // a clash: whichever holds the range goes

  Mapper mapper_;
  std::size_t max_mappings_, max_bytes_;
  mutable std::mutex mutex_;
  std::list<Mapping> recent_;  // most recently pinned first
  // recent_ by (GPU, handle): a pin of a cached mapping is one lookup, not a scan of up to
  // kMaxImports handles of 64 bytes.
  std::unordered_map<Key, std::list<Mapping>::iterator, KeyHash> index_;
  std::size_t bytes_ = 0;
};

}  // namespace strider::ipc
