#include "engine/cuda/type_state.hpp"

namespace strider::engine::cuda {

TypeState::~TypeState() {
  for (const Table& t : tables_) release_table(t);
}

void* TypeState::find(int device, int word, bool wide) const {
  std::lock_guard lock(mutex_);
  for (const Table& t : tables_) {
    if (t.device == device && t.word == word && t.wide == wide) return t.data;
  }
  return nullptr;
}

void* TypeState::add(Table table) const {
  std::lock_guard lock(mutex_);
  for (const Table& t : tables_) {
    if (t.device == table.device && t.word == table.word && t.wide == table.wide) {
      release_table(table);  // another thread uploaded the same table first
      return t.data;
    }
  }
  tables_.push_back(table);
  return table.data;
}

}  // namespace strider::engine::cuda
