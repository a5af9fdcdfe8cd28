// An MPI attribute key (of communicators or of datatypes) that one part of Strider caches its
// values under: made on first use, between MPI_Init and MPI_Finalize, and freed at finalize by
// its owner. Thread-safe.
#pragma once

#include <mpi.h>

#include <mutex>
#include <type_traits>

namespace strider::runtime {

enum class AttributeOf { Comm, Type };

template <AttributeOf Of>
class AttributeKey {
 public:
  using CopyFn = std::conditional_t<Of == AttributeOf::Comm, MPI_Comm_copy_attr_function,
                                    MPI_Type_copy_attr_function>;
  using DeleteFn = std::conditional_t<Of == AttributeOf::Comm, MPI_Comm_delete_attr_function,
                                      MPI_Type_delete_attr_function>;

  AttributeKey(CopyFn* copy, DeleteFn* erase) : copy_(copy), delete_(erase) {}

  // The key; MPI_KEYVAL_INVALID outside MPI_Init..MPI_Finalize or when the MPI refuses one.
  int get() {
    std::lock_guard lock(mutex_);
    if (key_ != MPI_KEYVAL_INVALID) return key_;
    int initialized = 0, finalized = 0;
    PMPI_Initialized(&initialized);
    PMPI_Finalized(&finalized);
    if (!initialized || finalized || create() != MPI_SUCCESS) key_ = MPI_KEYVAL_INVALID;
    return key_;
  }

  void free() {
    std::lock_guard lock(mutex_);
    if (key_ == MPI_KEYVAL_INVALID) return;
    if constexpr (Of == AttributeOf::Comm) {
      PMPI_Comm_free_keyval(&key_);
    } else {
      PMPI_Type_free_keyval(&key_);
    }
    key_ = MPI_KEYVAL_INVALID;
  }

 private:
  int create() {
    if constexpr (Of == AttributeOf::Comm) {
      return PMPI_Comm_create_keyval(copy_, delete_, &key_, nullptr);
    } else {
      return PMPI_Type_create_keyval(copy_, delete_, &key_, nullptr);
    }
  }

  std::mutex mutex_;
  int key_ = MPI_KEYVAL_INVALID;
  CopyFn* copy_;
  DeleteFn* delete_;
};

}  // namespace strider::runtime
