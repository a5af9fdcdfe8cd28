// What the GPU engine keeps per datatype: a block list's piece tables in device memory, one per
// (device, word size, index width), uploaded on first use and freed with the state. The plan
// that owns the type holds one. Plain C++ (no CUDA headers): the plan is built without CUDA too.
#pragma once

#include <mutex>
#include <vector>

namespace strider::engine::cuda {

class TypeState {
 public:
  struct Table {
    int device = -1;
    int word = 0;
    bool wide = false;
    void* data = nullptr;  // device memory on `device`
  };

  TypeState() = default;
  TypeState(const TypeState&) = delete;
  TypeState& operator=(const TypeState&) = delete;
  ~TypeState();  // frees the tables (a no-op in builds without CUDA)

  // The table for a key, or nullptr; `add` records a freshly uploaded one. Both take the lock;
  // the state is a cache, so both work on a const plan.
  void* find(int device, int word, bool wide) const;
  void* add(Table table) const;  // the table kept (another thread's, if it won the race)

 private:
  mutable std::mutex mutex_;
  mutable std::vector<Table> tables_;
};

// Frees one table's device memory (gpu_engine.cu; nothing in builds without CUDA).
void release_table(const TypeState::Table& table);

}  // namespace strider::engine::cuda
